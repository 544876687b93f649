#!/usr/bin/env python3
"""Writes a man page (roff, man macros) from a slice of a page of docs/.

The man pages are not a second text to keep in step: each is docs/'s own
markdown, converted at build time (man/meson.build), so a change to docs/
is a change to the man page. pandoc is not assumed; this converts the subset
docs/ uses: ATX headings, paragraphs, fenced code, pipe tables, bullet and
numbered lists (nested by indentation), code spans, **bold**, *italic* and
links (their text is kept, the target dropped: docs/ links to its own pages).

usage: md2man.py --name NAME --section N --summary TEXT --version V
                 --source PAGE.md [--from HEADING] [--to HEADING]
                 [--see-also a(1),b(5)] [--lead SECTION] -o OUT
--from/--to select the lines from the heading line --from (exclusive) up to
the heading line --to (exclusive); the slice's shallowest headings become .SH,
deeper ones .SS; text before the first of them goes under --lead
(default DESCRIPTION).
"""

import argparse
import re
import sys

# Typography docs/ uses, kept readable on any terminal (-Tascii included).
ASCII = {'…': '...', '→': '->', '—': '--', '–': '-', '−': '-', '×': 'x', '≤': '<=', '≥': '>=',
         '≠': '!=', '─': '-', '└': '`-', '▶': '>', '·': '.', '’': "'", '‘': "'", '“': '"', '”': '"'}


def escape(text):
    """roff-escapes plain text: backslashes, and characters outside ASCII."""
    text = text.replace('\\', '\\e')
    out = []
    for ch in text:
        if ord(ch) < 128:
            out.append(ch)
        elif ch in ASCII:
            out.append(ASCII[ch])
        else:
            out.append('\\[u%04X]' % ord(ch))
    return ''.join(out)


def literal(text):
    """A code span's or block's text: options keep a real minus (\\-)."""
    return escape(text).replace('-', '\\-')


def inline(text):
    """Markdown inline markup to roff font changes, escaping the rest."""
    out = []
    pos = 0
    # Code spans first (their content is literal), of any number of backticks.
    for m in re.finditer(r'(`+)(.+?)\1', text):
        out.append(prose(text[pos:m.start()]))
        out.append('\\fB' + literal(m.group(2).strip()) + '\\fR')
        pos = m.end()
    out.append(prose(text[pos:]))
    return ''.join(out)


def prose(text):
    # Markdown's backslash escapes (\| \* \_) stand for the character itself.
    text = re.sub(r'\\([|*_`\[\]<>#])', r'\1', text)
    text = re.sub(r'\[([^\]]+)\]\(([^)]+)\)', r'\1', text)
    text = escape(text)
    text = re.sub(r'\*\*(.+?)\*\*', r'\\fB\1\\fR', text)
    text = re.sub(r'(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])', r'\\fI\1\\fR', text)
    return text


def line_out(text):
    """One output line: a line starting with . or ' would be a request."""
    return '\\&' + text if text[:1] in ('.', "'") else text


def split_row(line):
    line = line.strip()
    if line.startswith('|'):
        line = line[1:]
    if line.endswith('|') and not line.endswith('\\|'):
        line = line[:-1]
    return [cell.strip().replace('\\|', '|') for cell in re.split(r'(?<!\\)\|', line)]


def plain(text):
    """A heading's text without its markup."""
    text = re.sub(r'\[([^\]]+)\]\([^)]+\)', r'\1', text)
    return text.replace('`', '').replace('**', '')


def convert(lines, lead):
    # Text before the slice's first heading gets one of its own.
    first = next((l for l in lines if l.strip()), '')
    out = [] if first.startswith('#') else ['.SH ' + lead]
    levels = [len(m.group(1)) for m in (re.match(r'(#+) ', l) for l in lines) if m]
    top = min(levels) if levels else 2
    i = 0
    list_indents = []  # the indentation of each open list level
    para = []
    in_contents = False

    def flush():
        if para:
            out.append('.PP' if not list_indents else '.IP')
            # One line: a code span may be broken across the source's lines.
            out.append(line_out(inline(' '.join(para))))
            para.clear()

    def close_lists(to_indent=-1):
        while list_indents and list_indents[-1] > to_indent:
            list_indents.pop()
            if list_indents:
                out.append('.RE')

    while i < len(lines):
        line = lines[i]
        heading = re.match(r'(#+) +(.*)', line)
        fence = re.match(r'(\s*)(`{3,})', line)
        item = re.match(r'(\s*)([-*]|\d+\.) +(.*)', line)
        if heading:
            flush()
            close_lists()
            text = plain(heading.group(2)).strip()
            # The table of contents lists headings a man pager shows anyway.
            in_contents = text.lower() == 'contents'
            if not in_contents:
                if len(heading.group(1)) == top:
                    out.append('.SH ' + escape(text.upper()).replace('"', "'"))
                else:
                    out.append('.SS "' + escape(text).replace('"', "'") + '"')
            i += 1
            continue
        if in_contents:
            i += 1
            continue
        if fence:
            flush()
            indent, ticks = len(fence.group(1)), fence.group(2)
            out.append('.sp')
            out.append('.RS 4' if not list_indents else '.RS')
            out.append('.nf')
            i += 1
            while i < len(lines) and not re.match(r'\s*' + ticks + r'\s*$', lines[i]):
                code = lines[i][indent:] if lines[i][:indent].strip() == '' else lines[i].lstrip()
                out.append(line_out(literal(code.rstrip())))
                i += 1
            out.append('.fi')
            out.append('.RE')
            i += 1
            continue
        if line.lstrip().startswith('|') and i + 1 < len(lines) and re.match(r'\s*\|?\s*:?-+', lines[i + 1]):
            flush()
            header = split_row(line)
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith('|'):
                cells = split_row(lines[i])
                out.append('.TP')
                out.append(line_out(inline(cells[0])))
                rest = cells[1:]
                for n, cell in enumerate(rest):
                    # Two columns read as term and meaning; more name each cell.
                    name = header[n + 1] if len(header) > 2 and n + 1 < len(header) else ''
                    if n:
                        out.append('.br')
                    out.append(line_out((inline(name) + ': ' if name else '') + inline(cell)))
                i += 1
            continue
        if item:
            flush()
            indent = len(item.group(1))
            if not list_indents or indent > list_indents[-1]:
                if list_indents:
                    out.append('.RS')
                list_indents.append(indent)
            else:
                close_lists(indent)
            mark = item.group(2)
            out.append('.IP ' + ('\\(bu 2' if mark in '-*' else mark + ' 4'))
            para.append(item.group(3))
            i += 1
            # The item's continuation lines (indented, not a new item or block).
            while (i < len(lines) and lines[i].strip() and lines[i][:1] == ' '
                   and not re.match(r'\s*([-*]|\d+\.) +', lines[i]) and not re.match(r'\s*```', lines[i])):
                para.append(lines[i].strip())
                i += 1
            # One line: a code span may be broken across the source's lines.
            out.append(line_out(inline(' '.join(para))))
            para.clear()
            continue
        if not line.strip():
            flush()
            i += 1
            continue
        if list_indents and line[:1] != ' ':
            close_lists()
        para.append(line.strip())
        i += 1
    flush()
    close_lists()
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--name', required=True)
    parser.add_argument('--section', required=True)
    parser.add_argument('--summary', required=True)
    parser.add_argument('--version', required=True)
    parser.add_argument('--source', required=True)
    parser.add_argument('--from', dest='start')
    parser.add_argument('--to', dest='end')
    parser.add_argument('--see-also', default='')
    parser.add_argument('--lead', default='DESCRIPTION')
    parser.add_argument('-o', dest='output', required=True)
    args = parser.parse_args()

    with open(args.source, encoding='utf-8') as f:
        lines = f.read().split('\n')
    first, last = 0, len(lines)
    if args.start:
        if args.start not in lines:
            sys.exit(f'md2man: {args.source} has no line "{args.start}"')
        first = lines.index(args.start) + 1
    else:
        # The page's own title (# ...) is the man page's NAME line instead.
        first = next((n + 1 for n, l in enumerate(lines) if l.startswith('# ')), 0)
    if args.end:
        if args.end not in lines[first:]:
            sys.exit(f'md2man: {args.source} has no line "{args.end}" after "{args.start}"')
        last = lines.index(args.end, first)

    manual = 'User Commands' if args.section == '1' else 'File Formats'
    page = [f'.TH {args.name.upper()} {args.section} "" "aasm {args.version}" "{manual}"',
            '.SH NAME', f'{literal(args.name)} \\- {escape(args.summary)}']
    page += convert(lines[first:last], args.lead)
    if args.see_also:
        refs = [re.match(r'(.+)\((\d)\)', r.strip()) for r in args.see_also.split(',')]
        page += ['.SH "SEE ALSO"', ',\n'.join(f'.BR {literal(m.group(1))} ({m.group(2)})' for m in refs)]
    source = 'docs/' + args.source.split('/docs/')[-1] if '/docs/' in args.source else args.source
    page += ['.PP', 'Generated from ' + literal(source) + ' of the aasm sources.']
    with open(args.output, 'w', encoding='ascii') as f:
        f.write('\n'.join(page) + '\n')


if __name__ == '__main__':
    main()
