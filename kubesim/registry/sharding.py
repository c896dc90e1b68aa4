"""The ``shardSelector`` of list and watch (KEP-5866, gate ShardedListAndWatch): its parser.

Twin of k8s.io/apiserver/pkg/sharding/parser.go. Upstream parses the selector as a CEL
expression with cel-go (no macros), never evaluates it, and walks the AST: the root must be a
``shardRange(field, hexStart, hexEnd)`` call or a chain of ``||`` over such calls. kubesim has no
CEL library, so this module carries a small recursive-descent parser of CEL's syntax (literals,
identifiers, field selection, calls, the operators, lists, maps and messages) that builds the
same AST shapes cel-go does, and then the same walk with the same checks, in the same order and
with the same messages. Hashing and matching are api/shard.py's (a link to the controller's
client/shard.py: one implementation).

Grammar that passes (CEL's, as the walk restricts it):

    selector   = shardRange { "||" shardRange }        (parentheses allowed anywhere)
    shardRange = "shardRange" "(" field "," hex "," hex ")"
    field      = "object.metadata.uid" | "object.metadata.namespace"
    hex        = a CEL string literal: '0x' and 16 lowercase hex digits, or '0x10000000000000000'

Errors, each upstream's message (the 400's message; see kubesim/README.md):

- ``empty shard selector is not allowed; omit the parameter for unfiltered lists``
- ``CEL parse error: <cel-go's first syntax error>``: the text after the prefix is cel-go's
  ANTLR wording, approximated here (``Syntax error: mismatched input ')' expecting ...``);
- ``unsupported function "_&&_"; only shardRange() and || are allowed`` (any other call:
  ``&&``, comparisons, ``!``, indexing, ``has``, ...);
- ``unexpected expression kind 2; expected shardRange() call or || operator`` (a bare
  identifier, literal, list, ...: cel-go's ExprKind printed as its number);
- ``shardRange() requires exactly 3 arguments, got 2``;
- ``shardRange() first argument: expected field path (e.g. object.metadata.uid), got expression
  kind 1``;
- ``unsupported field path "object.metadata.name"; supported: object.metadata.uid,
  object.metadata.namespace``;
- ``hexStart must be a string literal (e.g. '0xff'), got expression kind 4`` (a call), or
  ``hexStart must be a string literal, got int64`` (another literal, named by its Go type);
- ``hexStart must have '0x' prefix, got "8000000000000000"``;
- ``hexStart: hex value is required after '0x'``;
- ``hexStart: hex value too long (18 chars, max 17): "000000000000000000"``;
- ``hexStart: invalid hex character "g" in "0x0g"`` (uppercase digits are invalid too);
- ``hexStart: 17-digit hex value must be '0x10000000000000000' (2^64), got "0x1ffffffffffffffff"``;
- ``hexStart must be a 0x-prefixed 16-digit hex value, got "0x0" (did you mean
  "0x0000000000000000"?)``;
- ``shard range start 0x8000000000000000 must be less than end 0x8000000000000000``;
- ``all shard ranges must use the same field, got "object.metadata.uid" and
  "object.metadata.namespace"``.

(hexEnd's errors read the same with ``hexEnd``.) Quoted values are Go's ``%q``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesim.api import errors
from kubesim.api.shard import FIELDS, HASH_SPACE_END, ShardRange

__all__ = ["ShardSelectorError", "parse", "request_shard_ranges"]

# cel-go's ast.ExprKind values (common/ast/expr.go). The type has no String method, so its
# errors print the number: 1 a literal, 2 an identifier, 3 a field selection, 4 a call.
LITERAL_KIND, IDENT_KIND, SELECT_KIND, CALL_KIND = 1, 2, 3, 4
LIST_KIND, MAP_KIND, STRUCT_KIND = 5, 6, 7

_LOGICAL_OR = "_||_"  # operators.LogicalOr
_FULL_RANGE_END = "0x10000000000000000"  # 2**64, the one 17-digit bound


class ShardSelectorError(ValueError):
    """The selector is malformed; str() is upstream's message for it."""


# ---- the AST (the shapes of cel-go's ast.Expr kinds this module needs) ---------------------------


@dataclass
class _Expr:
    kind: int


@dataclass
class _Literal(_Expr):
    value: Any
    go_type: str  # what Go's %T prints for the literal's Value(): int64, string, []uint8, ...


@dataclass
class _Ident(_Expr):
    name: str


@dataclass
class _Select(_Expr):
    operand: _Expr
    field_name: str


@dataclass
class _Call(_Expr):
    function: str
    args: list[_Expr]
    target: _Expr | None = None


@dataclass
class _Aggregate(_Expr):
    """A list, map or message literal: the walk only ever reports its kind."""

    parts: list[_Expr] = field(default_factory=list)


# ---- the lexer --------------------------------------------------------------------------------

# Longest first where one mark starts another ("||" before a lone "|", which is no token).
_PUNCTUATION: tuple[str, ...] = (
    *("||", "&&", "==", "!=", "<=", ">=", "<", ">", "!", "-", "+", "*", "/", "%"),
    *("?", ":", ".", ",", "(", ")", "[", "]", "{", "}"),
)
# CEL's reserved words: never identifiers (cel-go reports them after parsing).
_RESERVED = frozenset(
    "as break const continue else for function if import let loop package namespace return "
    "var void while".split()
)
_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "`": "`",
    "?": "?",
}


@dataclass
class _Token:
    kind: str  # a punctuation mark, "ident", "int", "uint", "double", "string", "bytes", "eof"
    text: str  # as written (ANTLR names a token by its text in errors)
    value: Any = None


class _Syntax(Exception):
    """A syntax error; its message is what follows cel-go's "Syntax error: "."""


class _Invalid(Exception):
    """A literal cel-go rejects after parsing ("invalid int literal"): no "Syntax error"."""


def _lex(src: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(src)
    while i < n:
        ch = src[i]
        if ch in " \t\n\r\f":
            i += 1
            continue
        if src.startswith("//", i):
            end = src.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        start = i
        if ch in _DIGITS or (ch == "." and i + 1 < n and src[i + 1] in _DIGITS):
            i, token = _lex_number(src, i)
            tokens.append(token)
            continue
        if ch.isascii() and (ch.isalpha() or ch == "_"):
            while i < n and src[i].isascii() and (src[i].isalnum() or src[i] == "_"):
                i += 1
            word = src[start:i]
            prefix = word.lower()
            if i < n and src[i] in "'\"" and prefix in ("r", "b", "rb", "br"):
                i, token = _lex_string(src, start, i, raw="r" in prefix, is_bytes="b" in prefix)
                tokens.append(token)
                continue
            tokens.append(_Token("ident", word))
            continue
        if ch in "'\"":
            i, token = _lex_string(src, start, i, raw=False, is_bytes=False)
            tokens.append(token)
            continue
        for mark in _PUNCTUATION:
            if src.startswith(mark, i):
                tokens.append(_Token(mark, mark))
                i += len(mark)
                break
        else:
            raise _Syntax(f"token recognition error at: '{ch}'")
    tokens.append(_Token("eof", "<EOF>"))
    return tokens


_DIGITS = "0123456789"
_HEX_DIGITS = "0123456789abcdefABCDEF"


def _lex_number(src: str, i: int) -> tuple[int, _Token]:
    """An int (decimal or 0x hex), a uint (with a u suffix) or a double, as CEL's lexer."""
    start, n = i, len(src)
    if src.startswith(("0x", "0X"), i) and i + 2 < n and src[i + 2] in _HEX_DIGITS:
        i += 2
        while i < n and src[i] in _HEX_DIGITS:
            i += 1
        digits, base = src[start + 2 : i], 16
    else:
        while i < n and src[i] in _DIGITS:
            i += 1
        is_double = False
        if i + 1 < n and src[i] == "." and src[i + 1] in _DIGITS:
            is_double = True
            i += 1
            while i < n and src[i] in _DIGITS:
                i += 1
        if i < n and src[i] in "eE":
            j = i + 1
            if j < n and src[j] in "+-":
                j += 1
            if j < n and src[j] in _DIGITS:
                is_double = True
                i = j
                while i < n and src[i] in _DIGITS:
                    i += 1
        if is_double:
            return i, _Token("double", src[start:i], float(src[start:i]))
        digits, base = src[start:i], 10
    if i < n and src[i] in "uU":
        i += 1
        return i, _Token("uint", src[start:i], (int(digits, base), base))
    return i, _Token("int", src[start:i], (int(digits, base), base))


def _lex_string(src: str, start: int, i: int, *, raw: bool, is_bytes: bool) -> tuple[int, _Token]:
    n = len(src)
    quote = src[i] * 3 if src.startswith(src[i] * 3, i) else src[i]
    i += len(quote)
    out: list[str] = []
    while True:
        if i >= n or (len(quote) == 1 and src[i] in "\r\n"):
            raise _Syntax(f"token recognition error at: '{src[start:i]}'")
        if src.startswith(quote, i):
            i += len(quote)
            break
        ch = src[i]
        if ch == "\\" and not raw:
            i, text = _unescape(src, start, i + 1)
            out.append(text)
            continue
        if ch == "\\" and raw and i + 1 < n:
            # A raw string keeps the backslash, but an escaped quote does not end it.
            out.append(src[i : i + 2])
            i += 2
            continue
        out.append(ch)
        i += 1
    text = "".join(out)
    if is_bytes:
        return i, _Token("bytes", src[start:i], text.encode("utf-8", "surrogatepass"))
    return i, _Token("string", src[start:i], text)


def _unescape(src: str, start: int, i: int) -> tuple[int, str]:
    """One escape sequence after a backslash: the simple ones, \\x, \\u, \\U and octal."""
    n = len(src)
    if i >= n:
        raise _Syntax(f"token recognition error at: '{src[start:i]}'")
    ch = src[i]
    if ch in _ESCAPES:
        return i + 1, _ESCAPES[ch]
    width = {"x": 2, "X": 2, "u": 4, "U": 8}.get(ch)
    if width is not None:
        digits = src[i + 1 : i + 1 + width]
        if len(digits) == width and all(c in _HEX_DIGITS for c in digits):
            return i + 1 + width, chr(int(digits, 16))
    elif ch in "0123" and len(src[i : i + 3]) == 3 and all(c in "01234567" for c in src[i : i + 3]):
        return i + 3, chr(int(src[i : i + 3], 8))
    raise _Syntax(f"token recognition error at: '{src[start : i + 1]}'")


# ---- the parser (CEL's grammar, precedence lowest first) ---------------------------------------

_PRIMARY_EXPECTED = (
    "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, "
    "STRING, BYTES, IDENTIFIER}"
)
_RELATIONS = {
    "<": "_<_",
    "<=": "_<=_",
    ">=": "_>=_",
    ">": "_>_",
    "==": "_==_",
    "!=": "_!=_",
}


class _Parser:
    def __init__(self, src: str):
        self.tokens = _lex(src)
        self.pos = 0

    @property
    def tok(self) -> _Token:
        return self.tokens[self.pos]

    def take(self) -> _Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def expect(self, kind: str, expected: str) -> _Token:
        if self.tok.kind != kind:
            raise _Syntax(f"mismatched input '{self.tok.text}' expecting {expected}")
        return self.take()

    def parse(self) -> _Expr:
        expr = self.expr()
        if self.tok.kind != "eof":
            raise _Syntax(f"mismatched input '{self.tok.text}' expecting <EOF>")
        return expr

    def expr(self) -> _Expr:
        cond = self.logical("||", "_||_", self.conditional_and)
        if self.tok.kind != "?":
            return cond
        self.take()
        then = self.logical("||", "_||_", self.conditional_and)
        self.expect(":", "':'")
        return _Call(CALL_KIND, "_?_:_", [cond, then, self.expr()])

    def conditional_and(self) -> _Expr:
        return self.logical("&&", "_&&_", self.relation)

    def logical(self, mark: str, function: str, operand) -> _Expr:
        terms = [operand()]
        while self.tok.kind == mark:
            self.take()
            terms.append(operand())
        return _balanced(terms, function, 0, len(terms) - 2)

    def relation(self) -> _Expr:
        left = self.addition()
        while self.tok.kind in _RELATIONS or (self.tok.kind == "ident" and self.tok.text == "in"):
            op = self.take()
            function = "@in" if op.kind == "ident" else _RELATIONS[op.kind]
            left = _Call(CALL_KIND, function, [left, self.addition()])
        return left

    def addition(self) -> _Expr:
        left = self.multiplication()
        while self.tok.kind in ("+", "-"):
            op = self.take().kind
            left = _Call(CALL_KIND, f"_{op}_", [left, self.multiplication()])
        return left

    def multiplication(self) -> _Expr:
        left = self.unary()
        while self.tok.kind in ("*", "/", "%"):
            op = self.take().kind
            left = _Call(CALL_KIND, f"_{op}_", [left, self.unary()])
        return left

    def unary(self) -> _Expr:
        if self.tok.kind == "!":
            count = 0
            while self.tok.kind == "!":
                self.take()
                count += 1
            member = self.member()
            # cel-go drops pairs of negations: !!x is x.
            return member if count % 2 == 0 else _Call(CALL_KIND, "!_", [member])
        # "-1" is a negative literal (CEL's grammar signs numbers); "-x" is the call -_(x).
        if self.tok.kind == "-" and self.tokens[self.pos + 1].kind not in ("int", "uint", "double"):
            count = 0
            while self.tok.kind == "-":
                self.take()
                count += 1
            member = self.member()
            return member if count % 2 == 0 else _Call(CALL_KIND, "-_", [member])
        return self.member()

    def member(self) -> _Expr:
        node = self.primary()
        while True:
            if self.tok.kind == ".":
                self.take()
                name = self.expect("ident", "IDENTIFIER").text
                if self.tok.kind == "(":
                    node = _Call(CALL_KIND, name, self.arguments(), target=node)
                else:
                    node = _Select(SELECT_KIND, node, name)
            elif self.tok.kind == "[":
                self.take()
                index = self.expr()
                self.expect("]", "']'")
                node = _Call(CALL_KIND, "_[_]", [node, index])
            elif self.tok.kind == "{" and isinstance(node, _Select | _Ident):
                node = self.message(node)
            else:
                return node

    def arguments(self) -> list[_Expr]:
        self.expect("(", "'('")
        args: list[_Expr] = []
        if self.tok.kind != ")":
            args.append(self.expr())
            while self.tok.kind == ",":
                self.take()
                args.append(self.expr())
        self.expect(")", "{')', ','}")
        return args

    def message(self, name: _Expr) -> _Expr:
        self.expect("{", "'{'")
        fields: list[_Expr] = [name]
        while self.tok.kind != "}":
            self.expect("ident", "{'}', IDENTIFIER}")
            self.expect(":", "':'")
            fields.append(self.expr())
            if self.tok.kind != ",":
                break
            self.take()
        self.expect("}", "{'}', ','}")
        return _Aggregate(STRUCT_KIND, fields)

    def primary(self) -> _Expr:
        token = self.tok
        if token.kind == "." and self.tokens[self.pos + 1].kind == "ident":
            self.take()
            return self.identifier("." + self.take().text)
        if token.kind == "ident":
            self.take()
            if token.text == "true" or token.text == "false":
                return _Literal(LITERAL_KIND, token.text == "true", "bool")
            if token.text == "null":
                return _Literal(LITERAL_KIND, None, "structpb.NullValue")
            return self.identifier(token.text)
        if token.kind == "(":
            self.take()
            inner = self.expr()
            self.expect(")", "')'")
            return inner
        if token.kind == "[":
            self.take()
            items = self.items("]", self.expr)
            return _Aggregate(LIST_KIND, items)
        if token.kind == "{":
            self.take()
            return _Aggregate(MAP_KIND, self.items("}", self.map_entry))
        negative = token.kind == "-"
        if negative:
            self.take()
        return self.literal(self.take() if self.tok.kind != "eof" else self.tok, negative)

    def identifier(self, name: str) -> _Expr:
        if name.lstrip(".") in _RESERVED:
            raise _Invalid(f"reserved identifier: {name.lstrip('.')}")
        if self.tok.kind == "(":
            return _Call(CALL_KIND, name, self.arguments())
        return _Ident(IDENT_KIND, name)

    def items(self, close: str, element) -> list[_Expr]:
        out: list[_Expr] = []
        while self.tok.kind != close:
            out.append(element())
            if self.tok.kind != ",":
                break
            self.take()
        self.expect(close, f"{{'{close}', ','}}")
        return out

    def map_entry(self) -> _Expr:
        key = self.expr()
        self.expect(":", "':'")
        self.expr()
        return key

    def literal(self, token: _Token, negative: bool) -> _Expr:
        sign = -1 if negative else 1
        if token.kind == "int":
            value = sign * token.value[0]
            if not -(1 << 63) <= value < (1 << 63):
                raise _Invalid("invalid int literal")
            return _Literal(LITERAL_KIND, value, "int64")
        if token.kind == "uint":
            if negative or token.value[0] >= 1 << 64:
                raise _Invalid("invalid uint literal")
            return _Literal(LITERAL_KIND, token.value[0], "uint64")
        if token.kind == "double":
            return _Literal(LITERAL_KIND, sign * token.value, "float64")
        if not negative and token.kind == "string":
            return _Literal(LITERAL_KIND, token.value, "string")
        if not negative and token.kind == "bytes":
            return _Literal(LITERAL_KIND, token.value, "[]uint8")
        raise _Syntax(f"mismatched input '{token.text}' expecting {_PRIMARY_EXPECTED}")


def _balanced(terms: list[_Expr], function: str, lo: int, hi: int) -> _Expr:
    """cel-go's balancer: a || b || c || d as a balanced tree of _||_ calls (same in-order)."""
    if hi < lo:
        return terms[0]
    mid = (lo + hi + 1) // 2
    left = terms[mid] if mid == lo else _balanced(terms, function, lo, mid - 1)
    right = terms[mid + 1] if mid == hi else _balanced(terms, function, mid + 1, hi)
    return _Call(CALL_KIND, function, [left, right])


# ---- the walk (parser.go: walkExpr, parseShardRangeCall, extractFieldPath, extractHexLiteral) ---


def parse(expr: str) -> tuple[ShardRange, ...]:
    """The ranges of a shardSelector, or ShardSelectorError with upstream's message (Parse)."""
    expr = expr.strip()
    if expr == "":
        raise ShardSelectorError(
            "empty shard selector is not allowed; omit the parameter for unfiltered lists"
        )
    try:
        tree = _Parser(expr).parse()
    except _Syntax as e:
        raise ShardSelectorError(f"CEL parse error: Syntax error: {e}") from None
    except _Invalid as e:
        raise ShardSelectorError(f"CEL parse error: {e}") from None
    reqs = _walk(tree)
    for req in reqs[1:]:
        if req[0] != reqs[0][0]:
            raise ShardSelectorError(
                "all shard ranges must use the same field, got "
                f"{_go_quote(reqs[0][0])} and {_go_quote(req[0])}"
            )
    return tuple(ShardRange(_bound(start), _bound(end), key) for key, start, end in reqs)


def _walk(e: _Expr) -> list[tuple[str, str, str]]:
    if isinstance(e, _Call):
        if e.function == _LOGICAL_OR:
            return _walk(e.args[0]) + _walk(e.args[1])
        if e.function == "shardRange":
            return [_shard_range_call(e)]
        raise ShardSelectorError(
            f"unsupported function {_go_quote(e.function)}; only shardRange() and || are allowed"
        )
    raise ShardSelectorError(
        f"unexpected expression kind {e.kind}; expected shardRange() call or || operator"
    )


def _shard_range_call(call: _Call) -> tuple[str, str, str]:
    if len(call.args) != 3:
        raise ShardSelectorError(f"shardRange() requires exactly 3 arguments, got {len(call.args)}")
    try:
        path = _field_path(call.args[0])
    except ShardSelectorError as e:
        raise ShardSelectorError(f"shardRange() first argument: {e}") from None
    if path not in FIELDS:
        raise ShardSelectorError(
            f"unsupported field path {_go_quote(path)}; supported: "
            "object.metadata.uid, object.metadata.namespace"
        )
    start = _hex_literal(call.args[1], "hexStart")
    end = _hex_literal(call.args[2], "hexEnd")
    # HexLess: with both normalised, the shorter string is the smaller, else lexicographic.
    if not (len(start), start) < (len(end), end):
        raise ShardSelectorError(f"shard range start {start} must be less than end {end}")
    return path, start, end


def _field_path(e: _Expr) -> str:
    if isinstance(e, _Ident):
        return e.name
    if isinstance(e, _Select):
        return _field_path(e.operand) + "." + e.field_name
    raise ShardSelectorError(
        f"expected field path (e.g. object.metadata.uid), got expression kind {e.kind}"
    )


def _hex_literal(e: _Expr, name: str) -> str:
    if not isinstance(e, _Literal):
        raise ShardSelectorError(
            f"{name} must be a string literal (e.g. '0xff'), got expression kind {e.kind}"
        )
    if e.go_type != "string":
        raise ShardSelectorError(f"{name} must be a string literal, got {e.go_type}")
    s: str = e.value
    if not s.startswith("0x"):
        raise ShardSelectorError(f"{name} must have '0x' prefix, got {_go_quote(s)}")
    digits = s[2:]
    if digits == "":
        raise ShardSelectorError(f"{name}: hex value is required after '0x'")
    # Go's len() counts bytes, not characters.
    size = len(digits.encode("utf-8", "surrogatepass"))
    if size > 17:
        raise ShardSelectorError(
            f"{name}: hex value too long ({size} chars, max 17): {_go_quote(digits)}"
        )
    for c in digits:
        if c not in "0123456789abcdef":
            raise ShardSelectorError(
                f"{name}: invalid hex character {_go_quote(c)} in {_go_quote(s)}"
            )
    if size == 17:
        if s != _FULL_RANGE_END:
            raise ShardSelectorError(
                f"{name}: 17-digit hex value must be '{_FULL_RANGE_END}' (2^64), got {_go_quote(s)}"
            )
    elif size != 16:
        padded = "0x" + "0" * (16 - size) + digits
        raise ShardSelectorError(
            f"{name} must be a 0x-prefixed 16-digit hex value, got {_go_quote(s)} "
            f"(did you mean {_go_quote(padded)}?)"
        )
    return s


def _bound(text: str) -> int:
    value = int(text, 16)
    assert 0 <= value <= HASH_SPACE_END
    return value


_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}


def _go_quote(s: str) -> str:
    """Go's %q of a string (strconv.Quote): printable characters kept, the rest escaped."""
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


# ---- the request's parameter -------------------------------------------------------------------


def request_shard_ranges(query: dict, enabled: bool) -> tuple[str, tuple[ShardRange, ...]] | None:
    """The shardSelector of a list or watch request: (the text as sent, its ranges), or None.

    None when the gate is off (the parameter is ignored, as a server without
    ShardedListAndWatch ignores it, malformed or not) or the parameter is absent or empty.
    A malformed selector is a 400 BadRequest whose message is the parser's, before anything is
    listed or watched.
    """
    text = query.get("shardSelector")
    if not enabled or not text:
        return None
    try:
        return text, parse(text)
    except ShardSelectorError as e:
        raise errors.bad_request(str(e)) from None
