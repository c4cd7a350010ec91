"""Sizes, checked on every test run (STYLE.md: each function fits on a screen; no giant file):
no C++ function body under src/ over 60 lines (a lambda's and a test case's included), counted
from the line of its opening brace to that of its closing brace, and no non-test file under src/
over 400 lines (test files are test_*). Functions are found by matching braces once comments,
string, character and raw string literals and preprocessor lines are blanked; a brace is a body
when `)` (or a lambda's `]`) and at most qualifiers or a trailing return type come before it, and
the word before the `(` is no if/for/while/switch/catch. `--self-test` shows it can fail."""
import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"

MAX_FUNCTION_LINES = 60
MAX_FILE_LINES = 400

# Files excused from the limits, each with its reason (none today: keep it that way).
ALLOWED = {}

CPP = (".cpp", ".hpp")  # the function rule reads C++; the file rule reads every file

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9][A-Za-z0-9_.']*|->|::|&&|\S")
# Braces after `keyword (...)` open a statement's block (or doctest's suite or subcase), not a function.
CONTROL = {"if", "for", "while", "switch", "catch", "constexpr", "SUBCASE", "TEST_SUITE"}
# What may stand between a function's `)` and its `{` (a trailing return type aside).
QUALIFIERS = {"const", "noexcept", "override", "final", "mutable", "constexpr", "consteval", "volatile", "&", "&&"}
TRAILER = {"::", "<", ">", ",", "&", "&&", "*", "->"}
RAW_PREFIXES = ("R", "u8R", "uR", "UR", "LR")


def blank(text):
    """text with comments, literals and preprocessor lines replaced by spaces, newlines kept (so line
    numbers stay); a literal becomes one `0`, so the token before a brace is still a token."""
    out, i, n = [], 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            end = i
            while end < n and (text[end] != "\n" or text[end - 1] == "\\"):
                end += 1
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        if c == "\n":
            at_line_start = True
        elif not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == '"':
            word = re.search(r"[A-Za-z0-9_]*$", "".join(out[-4:])).group(0)
            if word in RAW_PREFIXES:
                delimiter = text[i + 1:text.index("(", i)]
                end = text.index(")" + delimiter + '"', i) + len(delimiter) + 2
            else:
                end = literal_end(text, i, '"')
            out.append("0" + re.sub(r"[^\n]", " ", text[i + 1:end]))
            i = end
        elif c == "'" and not digit_separator(out):
            end = literal_end(text, i, "'")
            out.append("0" + " " * (end - i - 1))
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def literal_end(text, start, quote):
    """The index just past the quoted literal that opens at start, escapes honoured."""
    i = start + 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def digit_separator(out):
    """Whether a ' now is C++14's digit separator (1'000): it follows a number's digits."""
    tail = re.search(r"[A-Za-z0-9_.']*$", "".join(out[-40:])).group(0)
    return bool(tail) and tail[0].isdigit()


def tokens(text):
    """(token, line) of blanked text."""
    line, last = 1, 0
    for match in TOKEN.finditer(text):
        line += text.count("\n", last, match.start())
        last = match.start()
        yield match.group(0), line


def matching_open(toks, k):
    """The index of the ( or { that the ) or } at toks[k] closes."""
    depth = 0
    while k >= 0:
        depth += {")": 1, "}": 1, "(": -1, "{": -1}.get(toks[k][0], 0)
        if depth == 0:
            return k
        k -= 1
    return 0


def function_name(toks, brace):
    """The name of the function (or "lambda") whose body opens at toks[brace], or None when that brace
    opens anything else: a class, namespace, initializer, or the block of if/for/while/switch/catch."""
    k = brace - 1
    trailer = []
    while k >= 0 and (toks[k][0] in TRAILER or IDENT.fullmatch(toks[k][0])):
        trailer.append(toks[k][0])
        k -= 1
    if k < 0:
        return None
    trailer.reverse()
    if "->" in trailer:
        trailer = trailer[: trailer.index("->")]
    if any(word not in QUALIFIERS for word in trailer):
        return None
    if toks[k][0] == "]":
        return "lambda"
    # A constructor's member initializers, `) : a_(x), b_{y} {`: back over them to its parameters.
    while toks[k][0] in (")", "}"):
        opening = matching_open(toks, k)
        if opening < 2 or not IDENT.fullmatch(toks[opening - 1][0]) or toks[opening - 2][0] not in (",", ":"):
            break
        k = opening - 3
        while k >= 0 and toks[k][0] in QUALIFIERS:
            k -= 1
        if k < 0:
            return None
    if toks[k][0] != ")":
        return None
    while True:
        k = matching_open(toks, k)
        before = toks[k - 1][0] if k > 0 else ""
        if before in ("noexcept", "throw") and k > 1 and toks[k - 2][0] == ")":
            k -= 2  # f() noexcept(x) {: on to f's own parentheses
            continue
        break
    if not before or before in CONTROL:
        return None
    return "lambda" if before == "]" else before


def long_functions(text):
    """(line, name, lines) of each function body of text longer than MAX_FUNCTION_LINES."""
    toks = list(tokens(blank(text)))
    opened = []
    for index, (tok, line) in enumerate(toks):
        if tok == "{":
            opened.append((index, line))
        elif tok == "}" and opened:
            start, start_line = opened.pop()
            count = line - start_line + 1
            if count > MAX_FUNCTION_LINES:
                name = function_name(toks, start)
                if name:
                    yield start_line, name, count


def is_test(path):
    return path.name.startswith("test_")


def file_problems(rel, text, test_file):
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if not test_file and lines > MAX_FILE_LINES:
        yield f"src/{rel}:1: {lines} lines; a source file has at most {MAX_FILE_LINES}"
    if rel.endswith(CPP):
        for line, name, count in long_functions(text):
            yield f"src/{rel}:{line}: {name}: its body is {count} lines; a function has at most {MAX_FUNCTION_LINES}"


def main():
    found, allowed, clean = [], [], []
    for path in sorted(p for p in SRC.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        rel = path.relative_to(SRC).as_posix()
        problems = list(file_problems(rel, path.read_text(), is_test(path)))
        if rel in ALLOWED:
            allowed += [f"{p} (allowed: {ALLOWED[rel]})" for p in problems]
            clean += [] if problems else [rel]
        else:
            found += problems
    for p in allowed + found:
        print(p)
    for rel in clean:
        print(f"note: src/{rel} is within the limits today (allowed: {ALLOWED[rel]})")
    print(f"size: {len(found)} problem(s), {len(allowed)} allowed")
    return 1 if found else 0


def body(lines):
    """A body of exactly `lines` lines: its `{` line, lines - 2 statements, its `}` line."""
    return "{\n" + "    x();\n" * (lines - 2) + "}\n"


SELF_TESTS = [
    # (what, snippet, the function names it must report)
    ("61-line function", "int f(int a)\n" + body(61), ["f"]),
    ("60-line function", "int f(int a)\n" + body(60), []),
    ("qualified method", "auto A::f() const noexcept -> std::map<int, int>\n" + body(61), ["f"]),
    ("constructor with initializers", "A::A(int a) : a_(a), b_(2)\n" + body(61), ["A"]),
    ("constructor with brace initializers", "A::A() noexcept : a_{1}, b_{f(2)}\n" + body(61), ["A"]),
    ("aggregate after a call", "void f() {}\nint x = g(1), y{\n" + body(70)[2:] + ";\n", []),
    ("lambda at namespace level", "const auto f = [](int x) {\n" + body(61)[2:-2] + "};\n", ["lambda"]),
    ("lambda without parameters", "void g() {\n  run([&] " + body(61) + ");\n" + "}\n", ["lambda", "g"]),
    ("lambda with mutable", "auto f = [x]() mutable -> int " + body(61) + ";\n", ["lambda"]),
    ("if block", "if (x) " + body(70), []),
    ("if constexpr, for, while, switch, catch",
     "".join(f"{k} (x) " + body(70) for k in ("if constexpr", "for", "while", "switch", "catch")), []),
    ("struct, namespace, initializer", "struct S " + body(70) + "namespace n " + body(70) + "int v[] = " + body(70), []),
    ("else and do", "if (x) {} else " + body(70) + "do " + body(70) + "while (x);", []),
    ("brace in a string", 'void f() {\n  s = "}";\n' + body(61)[2:] + "\n", ["f"]),
    ("brace in a char", "void f() {\n  c = '}';\n" + body(61)[2:] + "\n", ["f"]),
    ("brace in comments", "void f() {\n  // }\n  /* } */\n" + body(61)[2:] + "\n", ["f"]),
    ("brace in a raw string", 'void f() {\n  s = R"x(}")x";\n' + body(61)[2:] + "\n", ["f"]),
    ("escaped quote", 'void f() {\n  s = "\\"}";\n' + body(61)[2:] + "\n", ["f"]),
    ("digit separator", "void f() {\n  n = 1'000'000;\n  c = '{';\n" + body(61)[2:] + "\n", ["f"]),
    ("preprocessor line", "#define OPEN {\nvoid f()\n" + body(61), ["f"]),
    ("doctest case and subcase", 'TEST_CASE("x") {\n  SUBCASE("y") ' + body(65) + "}\n", ["TEST_CASE"]),
]


def self_test():
    failed = 0
    for what, snippet, expected in SELF_TESTS:
        got = sorted(name for _, name, _ in long_functions(snippet))
        if got != sorted(expected):
            failed += 1
            print(f"self-test: {what}: found {got}, expected {sorted(expected)}")
    long_file = "int x;\n" * (MAX_FILE_LINES + 1)
    if not list(file_problems("a/long.cpp", long_file, False)) or list(file_problems("a/test_long.cpp", long_file, True)):
        failed += 1
        print("self-test: a 401-line file: not flagged, or its test file flagged")
    if list(file_problems("a/ok.cpp", "int x;\n" * MAX_FILE_LINES, False)):
        failed += 1
        print("self-test: a 400-line file flagged")
    print(f"size self-test: {len(SELF_TESTS) + 2 - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(self_test() if sys.argv[1:] == ["--self-test"] else main())
