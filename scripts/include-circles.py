#!/usr/bin/env python3
"""Include circles between the modules of the tree (issue 30, item 4).

A module is a file pair X.c / X.h (one node per path without extension;
a header without a .c of its own, such as a private header, is a module
too). Module X depends on module Y when

  - a file of X includes Y.h (#include "Y.h", resolved in the tree), and,
    with --strict only,
  - X is a header whose functions are defined in Y.c: a header declared
    in one place and implemented by several files depends on each of
    them, so one header shared by files that implement it (a private
    header, a public header over several .c files) shows up as a circle
    even where no header includes another in a loop.

A circle is a strongly connected component of that graph with more than
one module. Tests (tests/) are left out. Definitions are found by the
house format (clang-format puts a definition's name at column 0 after its
return type's line); `static` ones are file-local and do not count.

Usage: scripts/include-circles.py [--strict] [--edges]   (from anywhere in the tree)
Prints each circle with the edges inside it; exit 1 when there is one.
"""
import os
import re
import subprocess
import sys

ROOT = subprocess.run(['git', 'rev-parse', '--show-toplevel'], capture_output=True, text=True,
                      cwd=os.path.dirname(os.path.abspath(__file__)), check=True).stdout.strip()
EXCLUDE = ('tests/',)


def files():
    out = subprocess.run(['git', 'ls-files', '--cached', '--others', '--exclude-standard',
                          '*.c', '*.h'], capture_output=True, text=True, cwd=ROOT,
                         check=True).stdout.split()
    return sorted(f for f in out if not f.startswith(EXCLUDE) and os.path.exists(
        os.path.join(ROOT, f)))


def read(path):
    with open(os.path.join(ROOT, path), encoding='utf-8', errors='replace') as f:
        return f.read()


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'//[^\n]*', ' ', text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def module(path):
    return os.path.splitext(path)[0]


def main():
    all_files = files()
    by_name = {}
    for f in all_files:
        by_name.setdefault(os.path.basename(f), []).append(f)

    def resolve(src, inc):
        local = os.path.normpath(os.path.join(os.path.dirname(src), inc))
        if local in all_files:
            return local
        cands = by_name.get(os.path.basename(inc), [])
        common = [c for c in cands if c.startswith('common/')]
        if common:
            return common[0]
        return cands[0] if len(cands) == 1 else None

    # Non-static functions defined in each .c (name at column 0, house format).
    defined = {}
    for f in all_files:
        if not f.endswith('.c'):
            continue
        lines = strip_comments(read(f)).split('\n')
        for i, line in enumerate(lines):
            m = re.match(r'([A-Za-z_]\w*) \(', line)
            if not m or i == 0:
                continue
            prev = lines[i - 1].strip()
            if not prev or prev.startswith('static') or prev.endswith((';', '}', '{', ')')):
                continue
            defined.setdefault(m.group(1), set()).add(f)

    edges = {}  # (from module, to module) -> reason

    def add(a, b, why):
        if a != b:
            edges.setdefault((a, b), why)

    for f in all_files:
        text = read(f)
        for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, flags=re.M):
            target = resolve(f, inc)
            if target:
                add(module(f), module(target), '%s includes %s' % (f, target))
        if f.endswith('.h') and '--strict' in sys.argv:
            for ident in set(re.findall(r'\b[A-Za-z_]\w*\b', strip_comments(text))):
                for c in sorted(defined.get(ident, ())):
                    add(module(f), module(c), '%s declares %s, defined in %s' % (f, ident, c))

    graph = {}
    for (a, b) in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())

    # Tarjan's strongly connected components (iterative).
    index, low, on, stack, sccs, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    sccs.append(sorted(comp))

    for comp in sorted(sccs):
        print('circle: %s' % ' '.join(comp))
        members = set(comp)
        for (a, b), why in sorted(edges.items()):
            if a in members and b in members:
                print('    %s -> %s: %s' % (a, b, why))
    if '--edges' in sys.argv:
        for (a, b), why in sorted(edges.items()):
            print('edge %s -> %s: %s' % (a, b, why))
    print('include-circles: %d circle(s) among %d modules' % (len(sccs), len(graph)))
    return 1 if sccs else 0


if __name__ == '__main__':
    sys.exit(main())
