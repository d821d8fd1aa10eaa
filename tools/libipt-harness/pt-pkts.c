/*
 * pt-pkts: libipt's packet view of a raw Intel PT stream (pt_pkt_next).
 *   pt-pkts FILE            one line per packet: <offset hex> <type> <fields>
 *                           (decoding starts at offset 0, no sync); on an
 *                           error "<offset hex> error <pt_errstr>", then
 *                           pt_pkt_sync_forward to the next PSB.
 *   pt-pkts --count FILE    decode everything without printing; print
 *                           "packets N bytes B ns T" (T = decode loop only).
 *   pt-pkts --ptdump FILE   the text Intel's ptdump prints with default
 *                           options (ptdump.c print_packet/print_buffer/
 *                           dump_sync), for systems where ptdump is not
 *                           packaged: sync to the first PSB, one line per
 *                           packet, "[off: error decoding packet: <err>]"
 *                           and a resync on errors.
 * Several FILEs (without --count): each one's output is preceded by a line
 * "== FILE".
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

static uint64_t sext48(uint64_t v)
{
	return v & (1ull << 47) ? v | 0xffff000000000000ull : v & 0xffffffffffffull;
}

/* ptdump.c print_packet() + print_buffer() for its default options. */
static void ptdump_packet(uint64_t off, const struct pt_packet *p)
{
	char op[10] = "", pl[64] = "";
	const struct pt_packet_ip *ip = &p->payload.ip;

	switch (p->type) {
	case ppt_psb: strcpy(op, "psb"); break;
	case ppt_psbend: strcpy(op, "psbend"); break;
	case ppt_pad: strcpy(op, "pad"); break;
	case ppt_ovf: strcpy(op, "ovf"); break;
	case ppt_stop: strcpy(op, "stop"); break;
	case ppt_fup: case ppt_tip: case ppt_tip_pge: case ppt_tip_pgd:
		strcpy(op, p->type == ppt_fup ? "fup" : p->type == ppt_tip ? "tip" :
		       p->type == ppt_tip_pge ? "tip.pge" : "tip.pgd");
		switch (ip->ipc) {
		case pt_ipc_suppressed: snprintf(pl, 25, "%x: ????????????????", 0); break;
		case pt_ipc_update_16: snprintf(pl, 25, "%x: ????????????%04" PRIx64, 1, ip->ip); break;
		case pt_ipc_update_32: snprintf(pl, 25, "%x: ????????%08" PRIx64, 2, ip->ip); break;
		case pt_ipc_update_48: snprintf(pl, 25, "%x: ????%012" PRIx64, 4, ip->ip); break;
		case pt_ipc_sext_48: snprintf(pl, 25, "%x: %016" PRIx64, 3, sext48(ip->ip)); break;
		case pt_ipc_full: snprintf(pl, 25, "%x: %016" PRIx64, 6, ip->ip); break;
		}
		break;
	case ppt_pip:
		strcpy(op, "pip");
		snprintf(pl, 25, "%" PRIx64 "%s", p->payload.pip.cr3, p->payload.pip.nr ? ", nr" : "");
		break;
	case ppt_vmcs:
		strcpy(op, "vmcs");
		snprintf(pl, 25, "%" PRIx64, p->payload.vmcs.base);
		break;
	case ppt_tnt_8: case ppt_tnt_64: {
		uint8_t bits = p->payload.tnt.bit_size;
		int i = 0;
		strcpy(op, p->type == ppt_tnt_8 ? "tnt.8" : "tnt.64");
		for (; bits && i < 48; ++i, --bits)
			pl[i] = p->payload.tnt.payload & (1ull << (bits - 1)) ? '!' : '.';
		pl[i] = 0;
		break;
	}
	case ppt_mode:
		if (p->payload.mode.leaf == pt_mol_exec) {
			const char *csd = p->payload.mode.bits.exec.csd ? "cs.d" : "";
			const char *csl = p->payload.mode.bits.exec.csl ? "cs.l" : "";
			strcpy(op, "mode.exec");
			snprintf(pl, 25, "%s%s%s", csd, csd[0] && csl[0] ? ", " : "", csl);
		} else {
			const char *intx = p->payload.mode.bits.tsx.intx ? "intx" : "";
			const char *abrt = p->payload.mode.bits.tsx.abrt ? "abrt" : "";
			strcpy(op, "mode.tsx");
			snprintf(pl, 25, "%s%s%s", intx, intx[0] && abrt[0] ? ", " : "", abrt);
		}
		break;
	case ppt_tsc: strcpy(op, "tsc"); snprintf(pl, 25, "%" PRIx64, p->payload.tsc.tsc); break;
	case ppt_cbr: strcpy(op, "cbr"); snprintf(pl, 25, "%x", p->payload.cbr.ratio); break;
	case ppt_tma: strcpy(op, "tma"); snprintf(pl, 25, "%x, %x", p->payload.tma.ctc, p->payload.tma.fc); break;
	case ppt_mtc: strcpy(op, "mtc"); snprintf(pl, 25, "%x", p->payload.mtc.ctc); break;
	case ppt_cyc: strcpy(op, "cyc"); snprintf(pl, 25, "%" PRIx64, p->payload.cyc.value); break;
	case ppt_mnt: strcpy(op, "mnt"); snprintf(pl, 25, "%" PRIx64, p->payload.mnt.payload); break;
	case ppt_exstop: strcpy(op, "exstop"); snprintf(pl, 25, "%s", p->payload.exstop.ip ? "ip" : ""); break;
	case ppt_mwait:
		strcpy(op, "mwait");
		snprintf(pl, 25, "%08x, %08x", p->payload.mwait.hints, p->payload.mwait.ext);
		break;
	case ppt_pwre:
		strcpy(op, "pwre");
		snprintf(pl, 25, "c%u.%u%s", (p->payload.pwre.state + 1) & 0xf,
			 (p->payload.pwre.sub_state + 1) & 0xf, p->payload.pwre.hw ? ", hw" : "");
		break;
	case ppt_pwrx: {
		const char *wr = NULL;
		int bad = 0;
		if (p->payload.pwrx.interrupt) wr = "int";
		if (p->payload.pwrx.store) { if (wr) bad = 1; wr = " st"; }
		if (p->payload.pwrx.autonomous) { if (wr) bad = 1; wr = " hw"; }
		if (!wr || bad) wr = "bad";
		strcpy(op, "pwrx");
		snprintf(pl, 25, "%s: c%u, c%u", wr, (p->payload.pwrx.last + 1) & 0xf,
			 (p->payload.pwrx.deepest + 1) & 0xf);
		break;
	}
	case ppt_ptw:
		strcpy(op, "ptw");
		snprintf(pl, 25, "%x: %" PRIx64 "%s", p->payload.ptw.plc, p->payload.ptw.payload,
			 p->payload.ptw.ip ? ", ip" : "");
		break;
	default:
		snprintf(op, sizeof(op), "type%d", (int) p->type);
		break;
	}
	if (pl[0])
		printf("%-17.16" PRIx64 " %-10s %s\n", off, op, pl);
	else
		printf("%-17.16" PRIx64 " %s\n", off, op);
}

static void ptdump(struct pt_packet_decoder *dec)
{
	struct pt_packet pkt;
	uint64_t off;
	int err;

	if (pt_pkt_sync_forward(dec) < 0)
		return;
	for (;;) {
		if (pt_pkt_get_offset(dec, &off) < 0)
			return;
		err = pt_pkt_next(dec, &pkt, sizeof(pkt));
		if (err < 0) {
			if (err == -pte_eos)
				return;
			printf("[%" PRIx64 ": error decoding packet: %s]\n", off,
			       pt_errstr(pt_errcode(err)));
			if (pt_pkt_sync_forward(dec) < 0)
				return;
			continue;
		}
		ptdump_packet(off, &pkt);
	}
}

static int one_file(int count, int fmt_ptdump, const char *path)
{
	struct pt_config config;
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	struct timespec t0, t1;
	int err;
	uint8_t *buf;
	long size;
	FILE *f;
	uint64_t npkts = 0, off;

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
	if (fmt_ptdump) {
		ptdump(dec);
		pt_pkt_free_decoder(dec);
		free(buf);
		return 0;
	}
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

int main(int argc, char **argv)
{
	int count = 0, fmt_ptdump = 0, i, rc;

	if (argc > 1 && !strcmp(argv[1], "--count")) {
		count = 1;
		argv++;
		argc--;
	} else if (argc > 1 && !strcmp(argv[1], "--ptdump")) {
		fmt_ptdump = 1;
		argv++;
		argc--;
	}
	if (argc < 2 || (count && argc != 2)) {
		fprintf(stderr, "usage: pt-pkts [--count|--ptdump] FILE...\n");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		if (argc > 2)
			printf("== %s\n", argv[i]);
		rc = one_file(count, fmt_ptdump, argv[i]);
		if (rc)
			return rc;
	}
	return 0;
}
