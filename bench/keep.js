// What a run of `npm run bench` must not lose from the BENCHMARKS.md it replaces: the sections it does not
// write (those measured by hand: 10, 11, 13, 14, 15, and any a partial run left out), their summary rows,
// and the paragraphs marked "by hand" inside a section it does write. Everything else is the run's own.

/** A section's number as its heading says it: `## 2b. Export…` → '2b'; undefined for an unnumbered one. */
function numberOf(heading) {
  return /^## (\d+[a-z]?)\. /.exec(heading)?.[1];
}

/** '2b' after '2' and before '3'; '10' after '9'. */
function byNumber(a, b) {
  const [na, nb] = [Number.parseInt(a, 10), Number.parseInt(b, 10)];
  return na !== nb ? na - nb : a.localeCompare(b);
}

/** The text before the first `## ` heading, then each `## ` section (its `###` subsections inside it). */
function sectionsOf(markdown) {
  const head = [];
  const sections = [];
  for (const line of markdown.split('\n')) {
    if (line.startsWith('## ')) sections.push({ heading: line, number: numberOf(line), lines: [line] });
    else (sections.at(-1)?.lines ?? head).push(line);
  }
  return { head, sections };
}

/** Blocks of text between blank lines. */
function paragraphsOf(lines) {
  return lines
    .join('\n')
    .split(/\n\s*\n/)
    .map((text) => text.trim())
    .filter(Boolean);
}

/** A summary row's section number: `| 2b | …` → '2b'. */
function rowNumber(line) {
  return /^\| (\d+[a-z]?) \|/.exec(line)?.[1];
}

/** The summary table of the new report, with the old rows of every section the run gave no row for. */
function keptSummary(generated, previous) {
  if (!previous) return generated;
  const written = new Set(generated.lines.map(rowNumber).filter(Boolean));
  const kept = previous.lines.filter((line) => {
    const number = rowNumber(line);
    return number !== undefined && !written.has(number);
  });
  if (kept.length === 0) return generated;
  const rows = [...generated.lines.filter((line) => rowNumber(line)), ...kept];
  rows.sort((a, b) => byNumber(rowNumber(a), rowNumber(b)));
  const first = generated.lines.findIndex((line) => rowNumber(line));
  const before = first === -1 ? generated.lines.filter((line) => line.trim() !== '') : generated.lines.slice(0, first);
  const after = generated.lines.slice(first === -1 ? generated.lines.length : first).filter((line) => !rowNumber(line));
  return { ...generated, lines: [...before, ...rows, ...after] };
}

/** A written section, followed by the old section's paragraphs marked "by hand" that the run did not write. */
function withHandParagraphs(generated, previous) {
  if (!previous) return generated;
  const text = generated.lines.join('\n');
  const missing = paragraphsOf(previous.lines.slice(1)).filter(
    (paragraph) => /by hand/i.test(paragraph) && !text.includes(paragraph),
  );
  if (missing.length === 0) return generated;
  const lines = [...generated.lines];
  while (lines.at(-1)?.trim() === '') lines.pop();
  for (const paragraph of missing) lines.push('', ...paragraph.split('\n'));
  return { ...generated, lines: [...lines, ''] };
}

/**
 * The new report with nothing of the old one lost: every numbered section of `previous` the run did not
 * write, kept verbatim in its place by number, with its summary rows; every "by hand" paragraph of a
 * section the run did write, after that section's own text; any unnumbered section the run has no
 * heading for, before "Where the figures come from".
 */
export function keepWhatTheRunDidNotWrite(markdown, previousMarkdown) {
  if (!previousMarkdown) return markdown;
  const now = sectionsOf(markdown);
  const before = sectionsOf(previousMarkdown);
  const previousOf = (section) =>
    before.sections.find((old) =>
      section.number === undefined ? old.heading === section.heading : old.number === section.number,
    );
  const numbered = now.sections
    .filter((section) => section.number !== undefined)
    .map((section) => withHandParagraphs(section, previousOf(section)));
  const writtenNumbers = new Set(numbered.map((section) => section.number));
  const writtenHeadings = new Set(now.sections.map((section) => section.heading));
  numbered.push(...before.sections.filter((old) => old.number !== undefined && !writtenNumbers.has(old.number)));
  numbered.sort((a, b) => byNumber(a.number, b.number));
  const unnumberedKept = before.sections.filter((old) => old.number === undefined && !writtenHeadings.has(old.heading));
  // The numbered sections go where the run put its own: after the summary, before the provenance.
  const out = [];
  let placed = false;
  const placeNumbered = () => {
    if (!placed) out.push(...numbered, ...unnumberedKept);
    placed = true;
  };
  for (const section of now.sections) {
    if (section.number !== undefined) {
      placeNumbered();
      continue;
    }
    if (section.heading === '## Where the figures come from') placeNumbered();
    out.push(section.heading === '## Summary' ? keptSummary(section, previousOf(section)) : section);
  }
  placeNumbered();
  return [...now.head, ...out.flatMap((section) => withBlankLineAfter(section.lines))].join('\n').replace(/\n+$/, '');
}

/** A section's lines ending in exactly one blank line, so sections from either file join alike. */
function withBlankLineAfter(lines) {
  const trimmed = [...lines];
  while (trimmed.at(-1)?.trim() === '') trimmed.pop();
  return [...trimmed, ''];
}
