/**
 * Intel PT packet type codes (small integers, for the allocation-free decoder)
 * and their names (the `kind` of a packet object).
 *
 * Names follow libipt's `ppt_*` enum with dots where Intel's SDM writes them
 * ("tip.pge", "mode.exec"); TNT is split by size as libipt does (tnt.8/tnt.64).
 */
export const PT = {
  PAD: 1,
  PSB: 2,
  PSBEND: 3,
  TNT8: 4,
  TNT64: 5,
  TIP: 6,
  TIP_PGE: 7,
  TIP_PGD: 8,
  FUP: 9,
  MODE_EXEC: 10,
  MODE_TSX: 11,
  PIP: 12,
  TSC: 13,
  MTC: 14,
  CYC: 15,
  TMA: 16,
  CBR: 17,
  VMCS: 18,
  OVF: 19,
  STOP: 20,
  PTW: 21,
  MWAIT: 22,
  PWRE: 23,
  PWRX: 24,
  EXSTOP: 25,
  BBP: 26,
  BIP: 27,
  BEP: 28,
  CFE: 29,
  EVD: 30,
  MNT: 31,
  TRIG: 32,
} as const;

export type PacketTypeCode = (typeof PT)[keyof typeof PT];

export const PACKET_KINDS = [
  '',
  'pad',
  'psb',
  'psbend',
  'tnt.8',
  'tnt.64',
  'tip',
  'tip.pge',
  'tip.pgd',
  'fup',
  'mode.exec',
  'mode.tsx',
  'pip',
  'tsc',
  'mtc',
  'cyc',
  'tma',
  'cbr',
  'vmcs',
  'ovf',
  'stop',
  'ptw',
  'mwait',
  'pwre',
  'pwrx',
  'exstop',
  'bbp',
  'bip',
  'bep',
  'cfe',
  'evd',
  'mnt',
  'trig',
] as const;

export type PacketKind = Exclude<(typeof PACKET_KINDS)[number], ''>;

/** IP compression (the `ipc` field of TIP/TIP.PGE/TIP.PGD/FUP), libipt `pt_ipc_*`. */
export const IPC = {
  SUPPRESSED: 0,
  UPDATE_16: 1,
  UPDATE_32: 2,
  SEXT_48: 3,
  UPDATE_48: 4,
  FULL: 6,
} as const;

/**
 * Packet decoder context: after a BBP packet, a byte whose low 3 bits are 100b
 * starts a BIP packet (4- or 8-byte payload) instead of a TNT (perf's
 * INTEL_PT_BLK_4_CTX / INTEL_PT_BLK_8_CTX).
 */
export const CTX_NONE = 0;
export const CTX_BLK_4 = 1;
export const CTX_BLK_8 = 2;
export type PacketContext = 0 | 1 | 2;
