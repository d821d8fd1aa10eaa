/*
 * pt-enc: encode an Intel PT stream with libipt's encoder (pt_enc_next) from a
 * text description, one packet per line (see README.md):
 *   pad | psb | psbend | ovf | stop
 *   tnt.8 <bit_size> <payload>      tnt.64 <bit_size> <payload>
 *   tip|tip.pge|tip.pgd|fup <ipc> <ip>
 *   mode.exec <csl> <csd>           mode.tsx <intx> <abrt>
 *   pip <cr3> <nr>   tsc <tsc>   cbr <ratio>   tma <ctc> <fc>   mtc <ctc>
 *   cyc <value>   vmcs <base>   mnt <payload>   exstop <ip>
 *   mwait <hints> <ext>   pwre <state> <sub_state> <hw>
 *   pwrx <last> <deepest> <interrupt> <store> <autonomous>
 *   ptw <plc> <payload> <ip>
 *   raw <hex bytes...>              (bytes copied as they are)
 * Numbers are C literals (0x.. hex). Writes the stream to argv[1] (or stdout).
 * With several output files, a line "---" ends one stream and starts the
 * next (argv[2], ...), so tests encode many streams with one process.
 * Exit 1 with "line N: <error>" on stderr if libipt refuses a packet.
 */
#include <intel-pt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAP (1u << 28)

static uint64_t num(char **save)
{
	char *t = strtok_r(NULL, " \t\r\n", save);
	return t ? strtoull(t, NULL, 0) : 0;
}

int main(int argc, char **argv)
{
	struct pt_config config;
	struct pt_encoder *enc;
	static char line[4096];
	uint8_t *buf = malloc(CAP);
	unsigned long lineno = 0;
	uint64_t off;
	FILE *out;
	int argi = 1;

	if (!buf)
		return 2;
	pt_config_init(&config);
	config.begin = buf;
	config.end = buf + CAP;
	enc = pt_alloc_encoder(&config);
	if (!enc)
		return 2;

next_stream:
	while (fgets(line, sizeof(line), stdin)) {
		struct pt_packet p;
		char *save, *op;
		int err;

		lineno++;
		op = strtok_r(line, " \t\r\n", &save);
		if (!op || op[0] == '#')
			continue;
		if (!strcmp(op, "---") && argi + 1 < argc) {
			if (pt_enc_get_offset(enc, &off) < 0)
				return 2;
			out = fopen(argv[argi++], "wb");
			if (!out || fwrite(buf, 1, off, out) != off)
				return 2;
			fclose(out);
			pt_enc_sync_set(enc, 0);
			goto next_stream;
		}
		memset(&p, 0, sizeof(p));
		if (!strcmp(op, "raw")) {
			char *t;
			if (pt_enc_get_offset(enc, &off) < 0)
				return 2;
			while ((t = strtok_r(NULL, " \t\r\n", &save))) {
				if (off >= CAP)
					return 2;
				buf[off++] = (uint8_t) strtoul(t, NULL, 16);
			}
			pt_enc_sync_set(enc, off);
			continue;
		}
		if (!strcmp(op, "pad")) p.type = ppt_pad;
		else if (!strcmp(op, "psb")) p.type = ppt_psb;
		else if (!strcmp(op, "psbend")) p.type = ppt_psbend;
		else if (!strcmp(op, "ovf")) p.type = ppt_ovf;
		else if (!strcmp(op, "stop")) p.type = ppt_stop;
		else if (!strcmp(op, "tnt.8") || !strcmp(op, "tnt.64")) {
			p.type = op[4] == '8' ? ppt_tnt_8 : ppt_tnt_64;
			p.payload.tnt.bit_size = (uint8_t) num(&save);
			p.payload.tnt.payload = num(&save);
		} else if (!strcmp(op, "tip") || !strcmp(op, "tip.pge") ||
			   !strcmp(op, "tip.pgd") || !strcmp(op, "fup")) {
			p.type = !strcmp(op, "tip") ? ppt_tip :
				 !strcmp(op, "tip.pge") ? ppt_tip_pge :
				 !strcmp(op, "tip.pgd") ? ppt_tip_pgd : ppt_fup;
			p.payload.ip.ipc = (enum pt_ip_compression) num(&save);
			p.payload.ip.ip = num(&save);
		} else if (!strcmp(op, "mode.exec")) {
			p.type = ppt_mode;
			p.payload.mode.leaf = pt_mol_exec;
			p.payload.mode.bits.exec.csl = num(&save) & 1;
			p.payload.mode.bits.exec.csd = num(&save) & 1;
		} else if (!strcmp(op, "mode.tsx")) {
			p.type = ppt_mode;
			p.payload.mode.leaf = pt_mol_tsx;
			p.payload.mode.bits.tsx.intx = num(&save) & 1;
			p.payload.mode.bits.tsx.abrt = num(&save) & 1;
		} else if (!strcmp(op, "pip")) {
			p.type = ppt_pip;
			p.payload.pip.cr3 = num(&save);
			p.payload.pip.nr = num(&save) & 1;
		} else if (!strcmp(op, "tsc")) {
			p.type = ppt_tsc;
			p.payload.tsc.tsc = num(&save);
		} else if (!strcmp(op, "cbr")) {
			p.type = ppt_cbr;
			p.payload.cbr.ratio = (uint8_t) num(&save);
		} else if (!strcmp(op, "tma")) {
			p.type = ppt_tma;
			p.payload.tma.ctc = (uint16_t) num(&save);
			p.payload.tma.fc = (uint16_t) num(&save);
		} else if (!strcmp(op, "mtc")) {
			p.type = ppt_mtc;
			p.payload.mtc.ctc = (uint8_t) num(&save);
		} else if (!strcmp(op, "cyc")) {
			p.type = ppt_cyc;
			p.payload.cyc.value = num(&save);
		} else if (!strcmp(op, "vmcs")) {
			p.type = ppt_vmcs;
			p.payload.vmcs.base = num(&save);
		} else if (!strcmp(op, "mnt")) {
			p.type = ppt_mnt;
			p.payload.mnt.payload = num(&save);
		} else if (!strcmp(op, "exstop")) {
			p.type = ppt_exstop;
			p.payload.exstop.ip = num(&save) & 1;
		} else if (!strcmp(op, "mwait")) {
			p.type = ppt_mwait;
			p.payload.mwait.hints = (uint32_t) num(&save);
			p.payload.mwait.ext = (uint32_t) num(&save);
		} else if (!strcmp(op, "pwre")) {
			p.type = ppt_pwre;
			p.payload.pwre.state = (uint8_t) num(&save);
			p.payload.pwre.sub_state = (uint8_t) num(&save);
			p.payload.pwre.hw = num(&save) & 1;
		} else if (!strcmp(op, "pwrx")) {
			p.type = ppt_pwrx;
			p.payload.pwrx.last = (uint8_t) num(&save);
			p.payload.pwrx.deepest = (uint8_t) num(&save);
			p.payload.pwrx.interrupt = num(&save) & 1;
			p.payload.pwrx.store = num(&save) & 1;
			p.payload.pwrx.autonomous = num(&save) & 1;
		} else if (!strcmp(op, "ptw")) {
			p.type = ppt_ptw;
			p.payload.ptw.plc = (uint8_t) num(&save);
			p.payload.ptw.payload = num(&save);
			p.payload.ptw.ip = num(&save) & 1;
		} else {
			fprintf(stderr, "line %lu: unknown packet %s\n", lineno, op);
			return 1;
		}
		err = pt_enc_next(enc, &p);
		if (err < 0) {
			fprintf(stderr, "line %lu: %s: %s\n", lineno, op,
				pt_errstr(pt_errcode(err)));
			return 1;
		}
	}
	if (pt_enc_get_offset(enc, &off) < 0)
		return 2;
	out = argi < argc ? fopen(argv[argi], "wb") : stdout;
	if (!out || fwrite(buf, 1, off, out) != off)
		return 2;
	if (out != stdout)
		fclose(out);
	pt_free_encoder(enc);
	free(buf);
	return 0;
}
