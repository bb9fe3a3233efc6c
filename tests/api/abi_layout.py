#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The layout of every public struct, as C code that prints it.

Reads the preprocessed public headers (stdin: the output of cc -E on a
file that includes all of include/imgfs/), finds each "struct imgfs_* {"
definition and writes a C program (stdout) that prints, one line each,
the struct's size and alignment and every member's offset and size:

  struct imgfs_error size 264 align 4
  struct imgfs_error code offset 0 size 4

tests/api/abi.sh compiles and runs it and compares the lines with the
expectations file of the machine's architecture.
"""
import re
import sys

STRUCT_RE = re.compile(r"\bstruct\s+(imgfs_\w+)\s*\{")
FNPTR_RE = re.compile(r"\(\s*\*\s*(\w+)\s*\)")
NAME_RE = re.compile(r"(\w+)\s*(?:\[[^\]]*\]\s*)*$")


def body_of(text, start):
    """The text between the brace at @start and its match."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if not depth:
                return text[start + 1:i]
    sys.exit("abi_layout: unbalanced braces")


def split_top(s, sep):
    """@s split at @sep outside parentheses and brackets."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and not depth:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def member_names(decl):
    """Names declared by one member declaration (no trailing ';')."""
    decl = " ".join(decl.split())
    if "{" in decl:
        sys.exit("abi_layout: nested definition not handled: " + decl)
    m = FNPTR_RE.search(decl)
    if m:
        return [m.group(1)]
    names = []
    for part in split_top(decl, ","):
        m = NAME_RE.search(part.strip())
        if not m:
            sys.exit("abi_layout: cannot read member: " + decl)
        names.append(m.group(1))
    return names


def structs(text):
    found = {}
    for m in STRUCT_RE.finditer(text):
        body = body_of(text, m.end() - 1)
        found[m.group(1)] = [n for d in split_top(body, ";") if d.strip()
                             for n in member_names(d)]
    return found


def main():
    found = structs(sys.stdin.read())
    if not found:
        sys.exit("abi_layout: no public struct found")
    out = ["#include <stddef.h>", "#include <stdio.h>"]
    out += ["#include <imgfs/%s>" % h for h in sys.argv[1:]]
    out += ["#define S(t) printf(\"struct %s size %zu align %zu\\n\", #t, "
            "sizeof(struct t), _Alignof(struct t))",
            "#define M(t, m) printf(\"struct %s %s offset %zu size %zu\\n\", "
            "#t, #m, offsetof(struct t, m), sizeof(((struct t *)0)->m))",
            "int main(void)", "{"]
    for name in sorted(found):
        out.append("\tS(%s);" % name)
        out += ["\tM(%s, %s);" % (name, m) for m in found[name]]
    out += ["\treturn 0;", "}"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
