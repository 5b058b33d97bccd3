/**
 * Text from outside (the service, an input file) made safe to draw for a person: the one function
 * every path that writes to a terminal or to stderr uses (tables, `count --by` labels, progress,
 * summaries, errors, --debug, doctor). Data files (CSV, JSON, NDJSON) keep the bytes.
 *
 * Removed: whole escape sequences (CSI, and OSC, DCS, SOS, PM and APC strings up to their BEL or
 * ST, in 7-bit and 8-bit form, so no `]52;c;…` is left as text), then every other C0 control but
 * tab and line feed, DEL, every C1 control, and the bidi marks, embeddings, overrides and isolates
 * that reorder what a line appears to say (U+061C, U+200E-F, U+202A-E, U+2066-9).
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
  return text.replace(SEQUENCES, '').replace(CONTROLS, '');
}

/** displaySafe on one line: line breaks and tabs become single spaces (a table cell, a label, a progress line). */
export function displaySafeLine(text: string): string {
  return displaySafe(text.replace(/[\t\n\r\v\f\u0085\u2028\u2029]+/g, ' '));
}
