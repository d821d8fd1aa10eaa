/*
 * bpf-busy: load one BPF socket filter named perfpoke_busy made of N ALU
 * instructions (`r0 += 1` N times, then `r0 = 0; exit`), run it in the kernel
 * with BPF_PROG_TEST_RUN `repeat` times, then close it. A sampling recording
 * of this process (perf record -e cpu-clock -- bpf-busy) holds the program's
 * KSYMBOL / BPF_EVENT records and kernel samples inside its JITed code, which
 * perf names bpf_prog_<tag>_perfpoke_busy (test/script-bpf.test.ts).
 *
 * Build: gcc -O2 -o bpf-busy tools/bpf-load/bpf-busy.c
 * Usage: bpf-busy [N] [repeat] [delay_ms]
 *   prints "tag <16 hex digits> id <id>" once loaded, waits delay_ms (a recording
 *   started then finds the program already loaded), then runs it
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
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	int repeat = argc > 2 ? atoi(argv[2]) : 20000;
	int delay_ms = argc > 3 ? atoi(argv[3]) : 0;
	struct bpf_insn *insns;
	struct bpf_prog_info info;
	union bpf_attr a, q;
	unsigned char pkt[64];
	int fd;

	if (n < 1 || n > 500000 || repeat < 1) {
		fprintf(stderr, "bpf-busy: N must be 1..500000, repeat >= 1\n");
		return 2;
	}
	insns = calloc(n + 2, sizeof(*insns));
	if (!insns)
		return 1;
	for (int i = 0; i < n; i++) {
		insns[i].code = BPF_ALU64 | BPF_ADD | BPF_K; /* r0 += 1 */
		insns[i].imm = 1;
	}
	/* r0 must be initialised before use: the first instruction sets it */
	insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
	insns[0].imm = 0;
	insns[n].code = BPF_ALU64 | BPF_MOV | BPF_K; /* r0 = 0: drop the packet */
	insns[n + 1].code = BPF_JMP | BPF_EXIT;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = n + 2;
	a.license = (uintptr_t)"GPL";
	strncpy(a.prog_name, "perfpoke_busy", sizeof(a.prog_name) - 1);
	fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0) {
		fprintf(stderr, "bpf-busy: BPF_PROG_LOAD: %s\n", strerror(errno));
		return 1;
	}
	memset(&info, 0, sizeof(info));
	memset(&q, 0, sizeof(q));
	q.info.bpf_fd = fd;
	q.info.info_len = sizeof(info);
	q.info.info = (uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &q) == 0) {
		printf("tag ");
		for (int k = 0; k < BPF_TAG_SIZE; k++)
			printf("%02x", info.tag[k]);
		printf(" id %u\n", info.id);
	}
	fflush(stdout);
	if (delay_ms > 0)
		usleep(delay_ms * 1000);

	memset(pkt, 0, sizeof(pkt));
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = fd;
	a.test.data_in = (uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	a.test.repeat = repeat;
	if (sys_bpf(BPF_PROG_TEST_RUN, &a) != 0) {
		fprintf(stderr, "bpf-busy: BPF_PROG_TEST_RUN: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}
