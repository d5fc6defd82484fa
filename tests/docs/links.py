#!/usr/bin/env python3
"""Every relative link of the given Markdown files resolves: the file or folder exists
and a #fragment names a heading of the target (GitHub's anchors: lower case, punctuation
dropped, spaces to hyphens, -1, -2 ... for repeats). Links inside code are not links.
Prints FILE:LINE: what is wrong for each broken link; exits 1 if any."""
import os, re, sys

LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+"[^"]*")?\)')

def lines_outside_code(path):
    fence = None
    with open(path, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            m = re.match(r'^\s*(```|~~~)', line)
            if m:
                fence = None if fence == m.group(1) else (fence or m.group(1))
                continue
            if fence is None:
                yield number, re.sub(r'`[^`]*`', '', line)

def slug(heading):
    s = re.sub(r'`', '', heading.strip().lower())
    s = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', s)        # a link in a heading: its text
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')

anchors_cache = {}
def anchors(path):
    if path not in anchors_cache:
        seen, found = {}, set()
        fence = None
        with open(path, encoding='utf-8') as f:
            for line in f:
                m = re.match(r'^\s*(```|~~~)', line)
                if m:
                    fence = None if fence == m.group(1) else (fence or m.group(1))
                    continue
                h = re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
                if fence is None and h:
                    base = slug(h.group(1))
                    n = seen.get(base, 0)
                    found.add(base if n == 0 else f'{base}-{n}')
                    seen[base] = n + 1
        anchors_cache[path] = found
    return anchors_cache[path]

bad = 0
for path in sys.argv[1:]:
    for number, line in lines_outside_code(path):
        for target in LINK.findall(line):
            if re.match(r'^[a-z][a-z0-9+.-]*:', target):    # http:, https:, mailto:
                continue
            file_part, _, fragment = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                print(f'{path}:{number}: broken link {target}: no {dest}')
                bad += 1
            elif fragment and dest.endswith('.md') and fragment not in anchors(dest):
                print(f'{path}:{number}: broken link {target}: no heading #{fragment} in {dest}')
                bad += 1
sys.exit(1 if bad else 0)
