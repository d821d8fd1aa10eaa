/*
 * bpf-btf-load: load one BPF socket filter made of two sub-programs (a
 * bpf-to-bpf call) with BTF func info naming them perfpoke_main and
 * perfpoke_sub, hold it for hold_ms, then close it. perf names the JITed
 * code of such a program from its BTF (bpf_prog_<tag>_<FUNC name>, one
 * KSYMBOL per sub-program): the case tools/bpf-load's BTF-less programs do not
 * reach (test/record-bpf.test.ts).
 *
 * Build: gcc -O2 -o bpf-btf-load tools/bpf-load/bpf-btf-load.c
 * Usage: bpf-btf-load [hold_ms]    prints "id <prog id>" once loaded
 */
#include <linux/bpf.h>
#include <linux/btf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

/* BTF: [1] int, [2] func_proto int(void), [3] FUNC perfpoke_main, [4] FUNC perfpoke_sub */
static const char strs[] = "\0int\0perfpoke_main\0perfpoke_sub";
#define NAME_INT 1
#define NAME_MAIN 5
#define NAME_SUB 19

struct blob {
	struct btf_header h;
	uint32_t types[3 + 1 + 3 + 3 + 3];
	char strings[sizeof(strs)];
};

int main(int argc, char **argv)
{
	int hold_ms = argc > 1 ? atoi(argv[1]) : 1000;
	struct blob b;
	uint32_t *t = b.types;
	char log[65536];

	memset(&b, 0, sizeof(b));
	b.h.magic = BTF_MAGIC;
	b.h.version = BTF_VERSION;
	b.h.hdr_len = sizeof(b.h);
	b.h.type_off = 0;
	b.h.type_len = sizeof(b.types);
	b.h.str_off = sizeof(b.types);
	b.h.str_len = sizeof(strs);
	memcpy(b.strings, strs, sizeof(strs));
	/* [1] INT "int": size 4, encoding signed, 32 bits */
	*t++ = NAME_INT; *t++ = BTF_KIND_INT << 24; *t++ = 4; *t++ = (BTF_INT_SIGNED << 24) | 32;
	/* [2] FUNC_PROTO returning int, no params */
	*t++ = 0; *t++ = BTF_KIND_FUNC_PROTO << 24; *t++ = 1;
	/* [3], [4] FUNC (static linkage) of type 2 */
	*t++ = NAME_MAIN; *t++ = BTF_KIND_FUNC << 24; *t++ = 2;
	*t++ = NAME_SUB; *t++ = BTF_KIND_FUNC << 24; *t++ = 2;

	union bpf_attr ba;
	memset(&ba, 0, sizeof(ba));
	ba.btf = (uintptr_t)&b;
	ba.btf_size = sizeof(b);
	ba.btf_log_buf = (uintptr_t)log;
	ba.btf_log_size = sizeof(log);
	ba.btf_log_level = 1;
	int btf_fd = (int)sys_bpf(BPF_BTF_LOAD, &ba);
	if (btf_fd < 0) {
		fprintf(stderr, "bpf-btf-load: BPF_BTF_LOAD: %s\n%s\n", strerror(errno), log);
		return 1;
	}

	struct bpf_insn insns[5];
	memset(insns, 0, sizeof(insns));
	insns[0].code = BPF_JMP | BPF_CALL; /* call perfpoke_sub (pc + 1 + 2) */
	insns[0].src_reg = BPF_PSEUDO_CALL;
	insns[0].imm = 2;
	insns[1].code = BPF_ALU64 | BPF_MOV | BPF_K; /* r0 = 0 */
	insns[2].code = BPF_JMP | BPF_EXIT;
	insns[3].code = BPF_ALU64 | BPF_MOV | BPF_K; /* perfpoke_sub: r0 = 0 */
	insns[4].code = BPF_JMP | BPF_EXIT;
	struct bpf_func_info fi[2] = {{.insn_off = 0, .type_id = 3}, {.insn_off = 3, .type_id = 4}};

	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = 5;
	a.license = (uintptr_t)"GPL";
	strncpy(a.prog_name, "perfpoke_btf", sizeof(a.prog_name) - 1);
	a.prog_btf_fd = btf_fd;
	a.func_info = (uintptr_t)fi;
	a.func_info_cnt = 2;
	a.func_info_rec_size = sizeof(fi[0]);
	a.log_buf = (uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	int fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0) {
		fprintf(stderr, "bpf-btf-load: BPF_PROG_LOAD: %s\n%s\n", strerror(errno), log);
		return 1;
	}
	struct bpf_prog_info info;
	union bpf_attr q;
	memset(&info, 0, sizeof(info));
	memset(&q, 0, sizeof(q));
	q.info.bpf_fd = fd;
	q.info.info_len = sizeof(info);
	q.info.info = (uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &q) == 0)
		printf("id %u\n", info.id);
	fflush(stdout);
	usleep(hold_ms * 1000);
	close(fd);
	close(btf_fd);
	return 0;
}
