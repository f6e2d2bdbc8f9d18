#!/usr/bin/env python3
"""Import cycles between the files of src/: which files name each other, directly or round
about, so that none of them can be read (or moved) without the rest.

Usage: scripts/module-cycles.py [FOLDER ...]   (default: every folder of src/)

Prints, per folder asked for, the largest strongly connected group of files (an import cycle)
and its size. A file imports another when its code names a path into it: `use` trees
(`use super::{api::{self, X}, health}`) and paths in code (`crate::sim::twin::Twin`).
Test modules are left out (what a file's tests import is not what the file needs).
"""

import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def module_of(path):
    """`src/sim/kube/api.rs` -> ('sim', 'kube', 'api'); `src/sim/mod.rs` -> ('sim',)."""
    rel = os.path.relpath(path, ROOT)[: -len(".rs")].split(os.sep)
    if rel[-1] == "mod":
        rel = rel[:-1]
    if rel == ["lib"] or rel == ["main"]:
        return ()
    return tuple(rel)


def strip_tests(text):
    """The file without its `#[cfg(test)]` module (at the end, as this project writes them)."""
    at = text.find("#[cfg(test)]\nmod tests")
    return text if at < 0 else text[:at]


def strip_comments(text):
    return "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("//"))


def expand_use(tree):
    """`super::{a::{self, X}, b}` -> ['super::a', 'super::a::X', 'super::b']."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, rest):
        if "{" not in rest:
            for part in rest.split(","):
                if part:
                    part = part.split(" as ")[0]
                    out.append(prefix + (part if part != "self" else "").rstrip(":"))
            return
        head, _, body = rest.partition("{")
        body = body[: body.rfind("}")]
        depth, start = 0, 0
        for i, c in enumerate(body + ","):
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            elif c == "," and depth == 0:
                walk(prefix + head, body[start:i])
                start = i + 1

    walk("", tree)
    return [p.rstrip(":") for p in out]


def references(text):
    text = strip_comments(strip_tests(text))
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):  # pub use, pub(crate) use too
        paths.extend(expand_use(m.group(1)))
    for m in re.finditer(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", text):
        paths.append(m.group(1))
    return paths


def resolve(path, here, modules):
    """The module file a path names, from the module `here`, or None."""
    parts = path.split("::")
    if parts[0] == "crate":
        base, parts = (), parts[1:]
    elif parts[0] == "super":
        base = here
        while parts and parts[0] == "super":
            base, parts = base[:-1], parts[1:]
    elif parts[0] == "self":
        base, parts = here[:-1] if here[-1:] == ("mod",) else here, parts[1:]
    elif here[-1:] == ("mod",) and here[:-1] + (parts[0],) in modules:
        # A mod.rs names its own children plainly (`pub use scheduler::reconcile`).
        base = here[:-1]
    else:
        return None
    best = None
    for i in range(len(parts) + 1):
        candidate = base + tuple(parts[:i])
        if candidate in modules:
            best = candidate
    return best


def strongly_connected(graph):
    index, low, stack, on, groups, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            groups.append(group)

    sys.setrecursionlimit(100000)
    for v in graph:
        if v not in index:
            visit(v)
    return groups


def main():
    files = {}
    for folder, _, names in os.walk(ROOT):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(folder, name)
                files[module_of(path)] = path
    graph = {}
    for module, path in files.items():
        with open(path) as f:
            text = f.read()
        targets = set()
        for ref in references(text):
            target = resolve(ref, module if not path.endswith("mod.rs") else module + ("mod",), files)
            # A module names its parent's items through `super`: only a file of its own counts.
            if target is not None and target != module and target != ():
                targets.add(target)
        graph[module] = targets
    folders = sys.argv[1:] or sorted({m[0] for m in files if m})
    groups = strongly_connected(graph)
    for folder in folders:
        inside = [g for g in groups if all(m[: len(folder.split("/"))] == tuple(folder.split("/")) for m in g)]
        largest = max(inside, key=len, default=[])
        named = sorted("/".join(m) for m in largest)
        print(f"{folder}: largest import cycle {len(largest) if len(largest) > 1 else 0} files")
        if len(largest) > 1 and "-v" in os.environ.get("CYCLES", ""):
            for n in named:
                print("   ", n)
    everywhere = max(groups, key=len)
    print(f"src: largest import cycle {len(everywhere)} files ({', '.join(sorted('/'.join(m) for m in everywhere)[:6])}, ...)")


if __name__ == "__main__":
    main()
