/*
 * bpf-load: load N tiny BPF socket filters (`r0 = 0; exit`) with bpf(2),
 * hold them for a moment, then close them. Each load makes the kernel emit
 * PERF_RECORD_KSYMBOL (type BPF) + PERF_RECORD_BPF_EVENT (PROG_LOAD), each
 * close the UNLOAD/unregister pair — a deterministic action to record with
 * `perfpoke record` and `perf record` side by side (test/record-bpf.test.ts).
 *
 * Build: gcc -O2 -o bpf-load tools/bpf-load/bpf-load.c
 * Usage: bpf-load [N] [hold_ms]    prints "tag <16 hex digits>" per program
 */
#include <linux/bpf.h>
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

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	int hold_ms = argc > 2 ? atoi(argv[2]) : 50;
	struct bpf_insn insns[2];
	int fds[64];

	if (n < 1 || n > 64) {
		fprintf(stderr, "bpf-load: N must be 1..64\n");
		return 2;
	}
	memset(insns, 0, sizeof(insns));
	insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K; /* r0 = 0 */
	insns[1].code = BPF_JMP | BPF_EXIT;          /* exit */

	for (int i = 0; i < n; i++) {
		union bpf_attr a;
		struct bpf_prog_info info;
		union bpf_attr q;

		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
		a.insns = (uintptr_t)insns;
		a.insn_cnt = 2;
		a.license = (uintptr_t)"GPL";
		strncpy(a.prog_name, "perfpoke_load", sizeof(a.prog_name) - 1);
		fds[i] = (int)sys_bpf(BPF_PROG_LOAD, &a);
		if (fds[i] < 0) {
			fprintf(stderr, "bpf-load: BPF_PROG_LOAD: %s\n", strerror(errno));
			return 1;
		}
		memset(&info, 0, sizeof(info));
		memset(&q, 0, sizeof(q));
		q.info.bpf_fd = fds[i];
		q.info.info_len = sizeof(info);
		q.info.info = (uintptr_t)&info;
		if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &q) == 0) {
			printf("tag ");
			for (int k = 0; k < BPF_TAG_SIZE; k++)
				printf("%02x", info.tag[k]);
			printf(" id %u\n", info.id);
		}
	}
	fflush(stdout);
	usleep(hold_ms * 1000);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	usleep(hold_ms * 1000);
	return 0;
}
