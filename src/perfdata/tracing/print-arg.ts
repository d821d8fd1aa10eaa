/** The tree of a tracepoint's print fmt arguments (built by print-args.ts, as libtraceevent's tep_print_arg). */
export type PrintArg =
  /** A number, an identifier the kernel left unexpanded, or a string literal: libtraceevent's atom. */
  | { k: 'atom'; text: string; quoted?: boolean }
  | { k: 'field'; name: string }
  | { k: 'null' }
  /**
   * An operator: binary; unary with a 'null' left (libtraceevent: TEP_PRINT_NULL);
   * '?' whose right is the ':' of the two branches; '[' (array element).
   */
  | { k: 'op'; op: string; left: PrintArg; right: PrintArg; prio: number }
  | { k: 'cast'; type: string; item: PrintArg }
  /** __print_flags / __print_symbolic: value of each entry as libtraceevent stores it (a number text or a name). */
  | { k: 'flags'; field: PrintArg; delim: string; list: FlagEntry[] }
  | { k: 'symbolic'; field: PrintArg; list: FlagEntry[] }
  /** __get_str(name) / __get_rel_str(name). */
  | { k: 'string'; name: string }
  | { k: 'dynarray'; name: string }
  | { k: 'dynarray_len'; name: string }
  /** __print_hex(arr, len) (sep ' ') / __print_hex_str (no separator). */
  | { k: 'hex'; field: PrintArg; len: PrintArg; sep: string }
  /** Any other helper: printing an event that uses one is refused. */
  | { k: 'call'; name: string; args: PrintArg[] };

export interface FlagEntry {
  value: string;
  str: string;
}

export interface PrintFmt {
  format: string;
  args: PrintArg[];
}
