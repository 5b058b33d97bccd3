/**
 * Text from outside (the service, an input file) made safe to draw for a person: the one function
 * every path that writes to a terminal or to stderr uses (tables, `count --by` labels, progress,
 * summaries, errors, --debug, doctor). Data files (CSV, JSON, NDJSON) keep the bytes.
 *
 * Removed: whole escape sequences (CSI, and OSC, DCS, SOS, PM and APC strings up to their BEL or
 * ST, in 7-bit and 8-bit form, so no `]52;c;…` is left as text), then every other C0 control but
 * tab and line feed, DEL, every C1 control, and the bidi marks, embeddings, overrides and isolates
 * that reorder what a line appears to say (U+061C, U+200E-F, U+202A-E, U+2066-9), the zero-width and
 * tag characters that hide text (HIDDEN below), and combining marks past the fourth on one letter.
 * Data written to a terminal is made visible instead (displayVisible).
 */

/** ESC or 8-bit CSI, parameters, intermediates, final byte. */
const CSI = String.raw`(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]?`;
/** OSC, DCS, SOS, PM, APC: a string up to BEL or ST (ESC \ or U+009C), or to the end when never terminated. */
const CONTROL_STRING =
  String.raw`(?:\u001b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])` +
  String.raw`[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?`;
/** Any other escape: ESC, intermediates, one final byte (ESC 7, ESC ( B, ESC c). */
const OTHER_ESCAPE = String.raw`\u001b[ -/]*[0-~]?`;
const SEQUENCES = new RegExp(`${CONTROL_STRING}|${CSI}|${OTHER_ESCAPE}`, 'g');
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function displaySafe(text: string): string {
  return text.replace(SEQUENCES, '').replace(CONTROLS, '').replace(HIDDEN, '').replace(MARK_RUN, '$1');
}

/** displaySafe on one line: line breaks and tabs become single spaces (a table cell, a label, a progress line). */
export function displaySafeLine(text: string): string {
  return displaySafe(text.replace(/[\t\n\r\v\f\u0085\u2028\u2029]+/g, ' '));
}

/**
 * Characters a terminal acts on, or that hide or reorder what a line appears to say, beyond C0 and
 * DEL: C1, the soft hyphen, bidi marks and controls, zero-width characters, the line and paragraph
 * separators, the byte-order mark, and tag characters (U+E0000-U+E007F, as UTF-16 pairs).
 */
const HIDDEN = /[\u0080-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|\udb40[\udc00-\udc7f]/g;
/** More combining marks than any script stacks on one letter: the rest only makes a line long (Zalgo). */
const MARK_RUN = /(\p{M}{4})\p{M}+/gu;

/**
 * Data for a person at a terminal (CSV or JSON on stdout that is a terminal, `-o /dev/tty`): every
 * control and hidden character made visible, never acted on and never silently dropped. C0 and DEL
 * become their Unicode control pictures (ESC is ␛), the others `<U+202E>`; a stack of combining
 * marks keeps its first four and says how many more there were. Tab and line feed stay.
 */
export function displayVisible(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) =>
      String.fromCharCode(c === '\u007f' ? 0x2421 : 0x2400 + c.charCodeAt(0)),
    )
    .replace(HIDDEN, (c) => `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`)
    .replace(MARK_RUN, (run, kept: string) => `${kept}<+${[...run].length - 4} marks>`);
}

/**
 * A JSON text whose strings carry no raw character of HIDDEN (nor DEL), each written as its `\uXXXX`
 * escape: the same JSON to any parser, and safe to `cat` (JSON.stringify escapes only C0). They
 * can stand only inside strings, so replacing them anywhere in the text is exact.
 */
export function jsonSafe(json: string): string {
  return json
    .replace(/\u007f/g, '\\u007f')
    .replace(HIDDEN, (c) =>
      Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
    );
}
