/*
 * bpf-fentry FUNC SECONDS — attach a do-nothing BPF fentry program to the
 * kernel function FUNC, keep it attached for SECONDS, then detach.
 *
 * Why: attaching a BPF_TRACE_FENTRY program makes the kernel build a BPF
 * trampoline and rewrite FUNC's fentry nop into a call to it (and back on
 * detach) — a real kind of text poke that no shell command can cause. There
 * is no bpftool/libbpf in the guest, so this talks to bpf(2) directly and
 * finds FUNC's BTF id by walking /sys/kernel/btf/vmlinux itself.
 * Built statically by build-initramfs.sh (gcc -static).
 */
#include <linux/bpf.h>
#include <linux/btf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 22, n = 0;
	unsigned char *buf = malloc(cap);
	if (!f || !buf)
		return NULL;
	for (;;) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap)
			break;
		cap *= 2;
		buf = realloc(buf, cap);
		if (!buf)
			return NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* The BTF type id of the FUNC named `name`, or 0. */
static uint32_t btf_func_id(const unsigned char *btf, size_t len, const char *name)
{
	const struct btf_header *h = (const void *)btf;
	if (len < sizeof(*h) || h->magic != BTF_MAGIC)
		return 0;
	const unsigned char *types = btf + h->hdr_len + h->type_off;
	const unsigned char *end = types + h->type_len;
	const char *strs = (const char *)btf + h->hdr_len + h->str_off;
	uint32_t id = 1;
	for (const unsigned char *p = types; p + sizeof(struct btf_type) <= end; id++) {
		const struct btf_type *t = (const void *)p;
		uint32_t kind = BTF_INFO_KIND(t->info), vlen = BTF_INFO_VLEN(t->info);
		if (kind == BTF_KIND_FUNC && strcmp(strs + t->name_off, name) == 0)
			return id;
		p += sizeof(*t);
		switch (kind) {
		case BTF_KIND_INT: p += 4; break;
		case BTF_KIND_ARRAY: p += 12; break;
		case BTF_KIND_STRUCT: case BTF_KIND_UNION: p += vlen * 12; break;
		case BTF_KIND_ENUM: p += vlen * 8; break;
		case BTF_KIND_FUNC_PROTO: p += vlen * 8; break;
		case BTF_KIND_VAR: p += 4; break;
		case BTF_KIND_DATASEC: p += vlen * 12; break;
		case 17 /* DECL_TAG */: p += 4; break;
		case 19 /* ENUM64 */: p += vlen * 12; break;
		default: break; /* PTR, FWD, TYPEDEF, qualifiers, FUNC, FLOAT, TYPE_TAG */
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bpf-fentry FUNC SECONDS\n");
		return 2;
	}
	size_t len;
	unsigned char *btf = slurp("/sys/kernel/btf/vmlinux", &len);
	if (!btf) {
		perror("bpf-fentry: /sys/kernel/btf/vmlinux");
		return 1;
	}
	uint32_t id = btf_func_id(btf, len, argv[1]);
	if (!id) {
		fprintf(stderr, "bpf-fentry: no BTF FUNC %s\n", argv[1]);
		return 1;
	}
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 }, /* r0 = 0 */
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char log[65536];
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_TRACING;
	a.expected_attach_type = BPF_TRACE_FENTRY;
	a.attach_btf_id = id;
	a.insns = (uintptr_t)prog;
	a.insn_cnt = 2;
	a.license = (uintptr_t)"GPL";
	a.log_buf = (uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	memcpy(a.prog_name, "perfpoke_fentry", 15); /* 16 bytes, NUL from memset */
	long prog_fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (prog_fd < 0) {
		perror("bpf-fentry: BPF_PROG_LOAD");
		fprintf(stderr, "%s\n", log);
		return 1;
	}
	memset(&a, 0, sizeof(a));
	a.raw_tracepoint.prog_fd = prog_fd;
	long link_fd = sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
	if (link_fd < 0) {
		perror("bpf-fentry: BPF_RAW_TRACEPOINT_OPEN");
		return 1;
	}
	printf("bpf-fentry: attached to %s (btf id %u)\n", argv[1], id);
	fflush(stdout);
	sleep(atoi(argv[2]));
	close(link_fd);
	close(prog_fd);
	printf("bpf-fentry: detached\n");
	return 0;
}
