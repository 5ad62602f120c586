#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every exported function is documented, and its documentation names its errors.

For each function a public header declares with MCP_EXTERN, the comment that documents it is
the one right above its declaration, or above the block of declarations it belongs to (lines
without a blank line between them). The test fails when there is none, or when a function
that can fail does not say how: a function returning int must name its codes (MCP_OK and
MCP_E..., or what its value means: "0 when", "1 when", "-1", "non-zero"...), one returning a
pointer must say when it is NULL, and any other must say what it gives when there is nothing
(or that it cannot fail). A function returning void has nothing to report. Usage: check.py
SOURCE_DIR."""
import glob
import os
import re
import sys

FAIL_WORDS = {
    'int': r'MCP_OK|MCP_E[A-Z]+|\b0 when|\b1 when|-1\b|[Nn]on-zero|[Nn]onzero|\b0 or 1\b|[Nn]ever fails|[Cc]annot fail|1 if|0 if|[Tt]he number',
    'pointer': r'\bNULL\b|[Nn]ever fails|[Cc]annot fail|never NULL',
    'other': r'\b0 when|\b0 if|-1|NULL|[Nn]ever fails|[Cc]annot fail|\b0\b|when there is none',
}


def comment_above(lines, i):
    """The comment ending right above line i, or above the block line i is in."""
    j = i - 1
    # Climb over the declarations of the block (no blank line between them).
    while j >= 0 and lines[j].strip() and not lines[j].rstrip().endswith('*/'):
        j -= 1
    if j < 0 or not lines[j].rstrip().endswith('*/'):
        return ''
    end = j
    while j >= 0 and '/*' not in lines[j]:
        j -= 1
    return '\n'.join(lines[j:end + 1]) if j >= 0 else ''


def main(src):
    missing, silent, n = [], [], 0
    for path in sorted(glob.glob(os.path.join(src, 'include', 'mcp', '*.h'))):
        text = open(path, encoding='utf-8').read()
        lines = text.split('\n')
        for m in re.finditer(r'^MCP_EXTERN\b([^;{]*?)\b(mcp_\w+)\s*\(', text, re.M):
            n += 1
            ret, name = ' '.join(m.group(1).split()), m.group(2)
            line = text.count('\n', 0, m.start())
            where = '%s:%d: %s' % (os.path.relpath(path, src), line + 1, name)
            doc = comment_above(lines, line)
            if not doc:
                missing.append(where)
                continue
            if re.fullmatch(r'void', ret):
                continue
            kind = 'pointer' if '*' in ret else 'int' if re.fullmatch(r'int', ret) else 'other'
            if not re.search(FAIL_WORDS[kind], doc):
                silent.append('%s (returns %s)' % (where, ret))
    for w in missing:
        print('doc: no comment documents ' + w)
    for w in silent:
        print('doc: the comment does not say how it fails: ' + w)
    if missing or silent:
        print('doc: FAIL: %d of %d exported functions undocumented, %d silent about their errors'
              % (len(missing), n, len(silent)))
        return 1
    print('doc: all %d exported functions are documented and name their errors' % n)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))
