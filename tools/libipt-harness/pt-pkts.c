/*
 * pt-pkts: libipt's packet view of a raw Intel PT stream (pt_pkt_next).
 *   pt-pkts FILE            one line per packet: <offset hex> <type> <fields>
 *                           (decoding starts at offset 0, no sync); on an
 *                           error "<offset hex> error <pt_errstr>", then
 *                           pt_pkt_sync_forward to the next PSB.
 *   pt-pkts --count FILE    decode everything without printing; print
 *                           "packets N bytes B ns T" (T = decode loop only).
 * Field formats are documented in README.md; test/pt-packets-libipt.test.ts
 * prints perfpoke's packets the same way.
 */
#include <intel-pt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void print_packet(uint64_t off, const struct pt_packet *p)
{
	printf("%" PRIx64 " ", off);
	switch (p->type) {
	case ppt_pad: printf("pad"); break;
	case ppt_psb: printf("psb"); break;
	case ppt_psbend: printf("psbend"); break;
	case ppt_ovf: printf("ovf"); break;
	case ppt_stop: printf("stop"); break;
	case ppt_tnt_8:
	case ppt_tnt_64:
		printf("%s %u %" PRIx64, p->type == ppt_tnt_8 ? "tnt.8" : "tnt.64",
		       p->payload.tnt.bit_size, p->payload.tnt.payload);
		break;
	case ppt_tip: case ppt_tip_pge: case ppt_tip_pgd: case ppt_fup:
		printf("%s %d %" PRIx64,
		       p->type == ppt_tip ? "tip" : p->type == ppt_tip_pge ? "tip.pge" :
		       p->type == ppt_tip_pgd ? "tip.pgd" : "fup",
		       (int) p->payload.ip.ipc, p->payload.ip.ip);
		break;
	case ppt_mode:
		if (p->payload.mode.leaf == pt_mol_exec)
			printf("mode.exec %u %u", p->payload.mode.bits.exec.csl,
			       p->payload.mode.bits.exec.csd);
		else
			printf("mode.tsx %u %u", p->payload.mode.bits.tsx.intx,
			       p->payload.mode.bits.tsx.abrt);
		break;
	case ppt_pip: printf("pip %" PRIx64 " %u", p->payload.pip.cr3, p->payload.pip.nr); break;
	case ppt_vmcs: printf("vmcs %" PRIx64, p->payload.vmcs.base); break;
	case ppt_cbr: printf("cbr %x", p->payload.cbr.ratio); break;
	case ppt_tsc: printf("tsc %" PRIx64, p->payload.tsc.tsc); break;
	case ppt_tma: printf("tma %x %x", p->payload.tma.ctc, p->payload.tma.fc); break;
	case ppt_mtc: printf("mtc %x", p->payload.mtc.ctc); break;
	case ppt_cyc: printf("cyc %" PRIx64, p->payload.cyc.value); break;
	case ppt_mnt: printf("mnt %" PRIx64, p->payload.mnt.payload); break;
	case ppt_exstop: printf("exstop %u", p->payload.exstop.ip); break;
	case ppt_mwait: printf("mwait %x %x", p->payload.mwait.hints, p->payload.mwait.ext); break;
	case ppt_pwre:
		printf("pwre %x %x %u", p->payload.pwre.state, p->payload.pwre.sub_state,
		       p->payload.pwre.hw);
		break;
	case ppt_pwrx:
		printf("pwrx %x %x %u %u %u", p->payload.pwrx.last, p->payload.pwrx.deepest,
		       p->payload.pwrx.interrupt, p->payload.pwrx.store,
		       p->payload.pwrx.autonomous);
		break;
	case ppt_ptw:
		printf("ptw %u %" PRIx64 " %u", p->payload.ptw.plc, p->payload.ptw.payload,
		       p->payload.ptw.ip);
		break;
	default: printf("type%d", (int) p->type); break;
	}
	printf(" size %u\n", p->size);
}

int main(int argc, char **argv)
{
	struct pt_config config;
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	struct timespec t0, t1;
	int count = 0, err;
	const char *path;
	uint8_t *buf;
	long size;
	FILE *f;
	uint64_t npkts = 0, off;

	if (argc > 1 && !strcmp(argv[1], "--count")) {
		count = 1;
		argv++;
		argc--;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: pt-pkts [--count] FILE\n");
		return 2;
	}
	path = argv[1];
	f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		return 2;
	buf = malloc(size ? size : 1);
	if (!buf || (size && fread(buf, 1, size, f) != (size_t) size))
		return 2;
	fclose(f);

	pt_config_init(&config);
	config.begin = buf;
	config.end = buf + size;
	dec = pt_pkt_alloc_decoder(&config);
	if (!dec)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = pt_pkt_sync_set(dec, 0);
	for (;;) {
		if (pt_pkt_get_offset(dec, &off) < 0)
			break;
		err = pt_pkt_next(dec, &pkt, sizeof(pkt));
		if (err < 0) {
			if (off >= (uint64_t) size)
				break;
			if (!count)
				printf("%" PRIx64 " error %s\n", off, pt_errstr(pt_errcode(err)));
			if (err == -pte_eos)
				break;
			err = pt_pkt_sync_forward(dec);
			if (err < 0)
				break;
			continue;
		}
		npkts++;
		if (!count)
			print_packet(off, &pkt);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (count)
		printf("packets %" PRIu64 " bytes %ld ns %lld\n", npkts, size,
		       (long long) (t1.tv_sec - t0.tv_sec) * 1000000000LL +
			       (t1.tv_nsec - t0.tv_nsec));
	pt_pkt_free_decoder(dec);
	free(buf);
	return 0;
}
