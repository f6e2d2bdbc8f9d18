#!/usr/bin/env python3
"""Import cycles between the files of src/: which files name each other, directly or round
about, so that none of them can be read (or moved) without the rest.

Usage: scripts/module-cycles.py [--max N] [FOLDER ...]   (default: every folder of src/)

--max N: exit 1 when an import cycle holds more than N files, or crosses from one top-level
folder of src/ into another (a cycle stays inside the folder that owns it).

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
    # Paths in code; a `use` tree's prefix (`crate::report::{`) is not one of them.
    code = re.sub(r"\buse\s+[^;]+;", "", text)
    for m in re.finditer(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", code):
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
    best, used = None, 0
    for i in range(len(parts) + 1):
        candidate = base + tuple(parts[:i])
        if candidate in modules:
            best, used = candidate, i
    # An item a folder's mod.rs only re-exports (`pub use model::Report`) lives in the child
    # that defines it: naming `report::Report` is an import of report/model, not of the folder.
    if best is not None and used < len(parts):
        return REEXPORTS.get(best, {}).get(parts[used], best)
    return best


REEXPORTS = {}


def reexports(module, text):
    """`pub use model::{Report, StepRecord}` in a mod.rs -> {'Report': module + ('model',), ...}."""
    found = {}
    for m in re.finditer(r"\bpub\s+use\s+([^;]+);", strip_comments(strip_tests(text))):
        for path in expand_use(m.group(1)):
            parts = path.split("::")
            if len(parts) == 2 and parts[0] not in ("crate", "super", "self"):
                found[parts[1]] = module + (parts[0],)
    return found


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
    for module, path in files.items():
        if path.endswith("mod.rs"):
            with open(path) as f:
                REEXPORTS[module] = {k: v for k, v in reexports(module, f.read()).items() if v in files}
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
    args = sys.argv[1:]
    limit = None
    if "--max" in args:
        at = args.index("--max")
        limit = int(args[at + 1])
        del args[at : at + 2]
    folders = args or sorted({m[0] for m in files if m})
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
    if limit is not None:
        failed = False
        for group in groups:
            named = ", ".join(sorted("/".join(m) for m in group))
            if len(group) > limit:
                print(f"FAIL: an import cycle of {len(group)} files (more than {limit}): {named}")
                failed = True
            if len(group) > 1 and len({m[:1] for m in group}) > 1:
                print(f"FAIL: an import cycle crosses folders: {named}")
                failed = True
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
