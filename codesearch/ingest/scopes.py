"""What a call's receiver is, from one file alone: the file's own class (`self`), a type (from a
constructor, an annotation, a declaration, a typed parameter or a field), a module (an import),
or something outside the repository (a built-in type): the hint call resolution reads.

A hint is text, stored with the call site: "" (nothing known: resolved by name), "self" (the
caller's own class), "super" (its bases), "ext" (never the repository's), or "TYPE@MODULE" with
either part empty ("Pool@sync": a type from an import; "Mux@": a type of this repository;
"@json": a module).
"""

from __future__ import annotations

import re

from ..model import ParsedDefinition
from . import call_chains
from .languages import LanguageSpec

SELF, SUPER, EXTERNAL = "self", "super", "ext"
METHOD = "method"  # a method of a receiver nothing is known of (LanguageSpec.unknown_receivers_call_methods)
CONFLICT = ""  # a name bound to two different types in one scope: its type is not known
PACKAGE = "pkg"  # a bare call of a function of the caller's package (LanguageSpec.bare_calls_in_package)
LOCAL = "local:"  # before the qualified name of the definition whose body declares the function called
_CHAIN = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_TYPE_CUT = re.compile(r"[\[<({|,\s]")
_OPTIONAL = re.compile(r"^(?:typing\.)?Optional\[(.*)\]$")
_CLASS_KINDS = frozenset({"class", "struct", "interface", "trait", "object", "impl", "type", "enum"})

Aliases = dict[str, tuple[str, str]]  # a name an import binds -> (module, the member it names or "")


def type_name(text: str) -> str:
    """The type a declaration names, without pointers, generics or quotes (`*sync.Pool` ->
    `sync.Pool`, `Optional["Foo"]` -> `Foo`, `Foo | None` -> `Foo`)."""
    text = text.strip().strip("\"'")
    optional = _OPTIONAL.match(text)
    if optional:
        text = optional.group(1).strip().strip("\"'")
    if "|" in text:
        text = next((p.strip() for p in text.split("|") if p.strip() not in ("None", "null", "undefined")), "")
    text = text.lstrip("*&").removeprefix("readonly ").strip()
    if text.startswith(("[", "map[", "chan ", "func")):
        return "[]"  # a slice, map, channel or function: a built-in
    cut = _TYPE_CUT.search(text)
    return text[:cut.start()] if cut else text


class Scopes:
    """The bindings of one file, by the definition they are made in (None: the file), and the
    names its imports bind; `hint` reads them for a call site."""

    def __init__(self, spec: LanguageSpec, definitions: list[ParsedDefinition], aliases: Aliases):
        self.spec, self.definitions, self.aliases = spec, definitions, aliases
        self.rewrites = [(re.compile(pattern), replacement) for pattern, replacement in spec.receiver_rewrites]
        self.bound: dict[tuple[int | None, str], str] = {}
        self.defined = {d.name for d in definitions}  # a file's own name hides a built-in one
        # (the definition a name is defined in, or None at top level; the name) -> its last definition
        self.named = {(d.parent, d.name): i for i, d in enumerate(definitions)}
        self.chains: dict[tuple[int | None, str], str] = {}  # (scope, a value's text) -> its hint
        self.alternatives: dict[tuple[int | None, str], set[str]] = {}  # the values of a CONFLICT
        self.values: set[tuple[int | None, str]] = set()  # names declared as values (parameters, variables)
        self.not_values = spec.uncallable_kinds | {"method"}  # definitions a bare name never calls
        # a class's name -> the first definition of it in the file; a struct before its `impl`
        # blocks, since its fields are bound there
        self.classes: dict[str, int] = {}
        for i, definition in enumerate(definitions):
            if definition.kind in _CLASS_KINDS:
                known = self.classes.get(definition.name)
                if known is None or (definitions[known].kind == "impl" and definition.kind != "impl"):
                    self.classes[definition.name] = i

    def _spelled(self, text: str) -> str:
        """`text` as scopes read it (the spec's receiver_rewrites)."""
        for pattern, replacement in self.rewrites:
            text = pattern.sub(replacement, text)
        return text

    def bind(self, scope: int | None, name: str, type_text: str) -> None:
        """`name` has type `type_text` in `scope`; `self.x` binds field x of the enclosing class."""
        if self.rewrites:
            name, type_text = self._spelled(name), self._spelled(type_text)
        if self.spec.result_type:  # `a, err := f()`: err is f's second result
            type_text = call_chains.assigned(name, type_text)
            if not type_text:
                return
        head, _, field = name.partition(".")
        if field:
            if head not in self.spec.self_names or "." in field:
                return
            scope, name = self._class_of(scope), field
            if scope is None:
                return
        key = (scope, name)
        known = self.bound.get(key)
        if known is None:
            self.bound[key] = type_text
        elif known != type_text:
            self.bound[key] = CONFLICT
            if self.spec.result_type:  # values of one type may still agree (Go's err, declared again and again)
                self.alternatives.setdefault(key, {known}).add(type_text)

    def declare(self, scope: int | None, name: str, line: int) -> None:
        """`name` is a value declared in `scope` on `line` (a parameter, a variable, whatever its
        type): a bare name that reaches it is that value, no definition
        (LanguageSpec.names_from_imports). A variable that holds a function is that function's
        definition (`const f = () => ...`: the name on the definition's name line), not a value."""
        definition = self.definitions[scope] if scope is not None else None
        if definition is None or definition.name != name or line != definition.name_line:
            self.values.add((scope, name))

    def _local_value(self, scope: int | None, name: str) -> bool:
        """Whether a bare `name` in `scope` is a value the file declares in it or around it,
        before a callable definition of that name does (both in one scope: each in an anonymous
        function of its own, `const f` in one test's callback and `const f = () => ...` in
        another, where ingest/block_names.py tells the function's uses apart); a class's own
        names are its members, never seen bare, and a file's name an import binds is that import."""
        while True:
            if scope is None or self.definitions[scope].kind not in _CLASS_KINDS:
                found = self.named.get((scope, name))
                if found is not None and self.definitions[found].kind not in self.not_values:
                    return (scope, name) in self.values  # a method (`app.path = function`) is its object's
                if (scope, name) in self.values:
                    return scope is not None or name not in self.aliases
            if scope is None:
                return False
            scope = self.definitions[scope].parent

    def _class_of(self, scope: int | None) -> int | None:
        """The class a definition belongs to: its nearest enclosing class, or for a method with
        a receiver (Go), the type of that name defined in this file."""
        while scope is not None:
            definition = self.definitions[scope]
            if definition.kind in _CLASS_KINDS:
                return scope
            if definition.kind == "method" and "." in definition.qualified_name:
                owner = definition.qualified_name.rsplit(".", 2)[-2]
                found = self.classes.get(owner)
                if found is not None:
                    return found
            scope = definition.parent
        return None

    def _base(self, cls: int) -> str | None:
        """The type a class of this file names first among its bases, or None."""
        return next(filter(None, (self.bound.get((cls, word)) for word in self.spec.super_names)), None)

    def _defines(self, cls: int, name: str) -> bool:
        return (cls, name) in self.named

    def _defining(self, type_text: str, name: str) -> str:
        """The type that `name` of a value of `type_text` comes from, following the first bases
        of this file's classes: the first that defines it, or the first base from elsewhere."""
        seen: set[int] = set()
        while (cls := self.classes.get(type_name(type_text))) is not None and cls not in seen:
            base = self._base(cls)
            if self._defines(cls, name) or base is None:
                break
            seen.add(cls)
            type_text = base
        return type_text

    def _inherited(self, cls: int | None, name: str) -> str:
        """`self.name()` in class `cls`: its own (SELF), or where it does not define `name`, the
        base it inherits it from (a class without bases still SELF: a mixin's subclass's)."""
        base = self._base(cls) if cls is not None and not self._defines(cls, name) else None
        hint = self._type_hint(self._defining(base, name)) if base else SELF
        return SELF if hint == EXTERNAL else hint

    def _agreed(self, scope: int | None, name: str) -> str:
        """The hint of a name bound to several values in one scope (Go's err, declared again and
        again): theirs where they agree, or all of them (call_chains.ONE_OF) where resolution is
        to tell; "" where one is not known."""
        while (scope, name) not in self.bound and scope is not None:
            scope = self.definitions[scope].parent
        hints = sorted({self._type_hint(text, scope) for text in self.alternatives.get((scope, name), ())})
        return "" if CONFLICT in hints or len(hints) > call_chains.MAX_ONE_OF else call_chains.ONE_OF.join(hints)

    def _own_field(self, cls: int | None, field: str) -> str | None:
        """The type of `self.field` in class `cls`: bound in it, or in its bases of this file."""
        seen: set[int] = set()
        while cls is not None and cls not in seen:
            found = self.bound.get((cls, field))
            if found is not None:
                return found
            seen.add(cls)
            base = self._base(cls)
            cls = self.classes.get(type_name(base)) if base else None
        return None

    def returned(self, scope: int | None, callee: str) -> str:
        """The type the file's own function `callee` (or `self.method` of the caller's class or its
        bases) returns, as its signature's annotation says (LanguageSpec.returns_annotation); ""
        where not told."""
        if not self.spec.returns_annotation:
            return ""
        head, _, name = callee.rpartition(".")
        owner = None  # the definition `name` belongs to: a class, or None for the file's top level
        if head:
            cls = self._class_of(scope) if head in self.spec.self_names else None
            if cls is None:
                return ""
            owner = self.classes.get(type_name(self._defining(self.definitions[cls].name, name)))
            if owner is None:
                return ""
        found = self.named.get((owner, name))
        said = re.search(self.spec.returns_annotation, self.definitions[found].signature) if found is not None else None
        return said.group(1) if said else ""

    def type_of(self, scope: int | None, name: str) -> str:
        """The type `name` is bound to in `scope` ("" where it is not known): what `x = name` binds x to."""
        head, _, field = name.partition(".")
        if field:
            return (self._own_field(self._class_of(scope), field) or "") if head in self.spec.self_names else ""
        return self._lookup(scope, name) or ""

    def _lookup(self, scope: int | None, name: str) -> str | None:
        while True:
            found = self.bound.get((scope, name))
            if found is not None:
                return found
            if scope is None:
                return None
            scope = self.definitions[scope].parent

    def _type_hint(self, type_text: str, scope: int | None = None) -> str:
        """The hint for a value of this type: a built-in, a type of an import, or of this
        repository; or of a call's result, where the language's signatures say it (`scope`: where
        the call's own names are looked up)."""
        if self.spec.result_type and not type_text.startswith("func") and (
                type_text.endswith(")") or type_text.startswith(call_chains.RANGE)
                or call_chains.positioned(type_text)[1] > 0):
            return self._chain(scope, type_text)
        name = type_name(type_text)
        if not name or (name in self.spec.builtin_types and not self.spec.extension_receiver):
            return EXTERNAL
        if name in self.spec.self_names:  # Rust's `Self`: the caller's own type
            return SELF
        qualifier, _, last = name.rpartition(".")
        if qualifier:
            alias = self.aliases.get(qualifier.split(".")[0])
            return f"{last}@{_module_of(alias, qualifier)}" if alias else ""
        alias = self.aliases.get(name)
        if alias is not None:
            return f"{alias[1] or name}@{alias[0]}"
        return f"{name}@"

    def _field(self, type_text: str, field: str) -> str | None:
        """The type of `field` of a class this file defines, or None."""
        name = type_name(type_text)
        owner = self.classes.get(name) if name and "." not in name else None
        return self.bound.get((owner, field)) if owner is not None else None

    def hint(self, scope: int | None, receiver: str | None, name: str) -> str:
        """How a call of `name` on `receiver` (None: a bare call) in definition `scope` is to be
        resolved."""
        if receiver is None:
            if self.spec.names_from_imports and self._local_value(scope, name):
                return EXTERNAL
            alias = self.aliases.get(name)
            if alias is not None:
                return f"@{alias[0]}"
            if self._builtin_function(name):
                return EXTERNAL
            value = self._lookup(scope, name)  # a local value called: a closure, a function pointer
            if value and type_name(value) in self.spec.builtin_types:
                return EXTERNAL
            if self.spec.bare_calls_in_package:  # a variable holding a function is no definition
                return self._closure(scope, name) or (EXTERNAL if value is not None else PACKAGE)
            if not self.spec.implicit_receiver or not name[:1].islower() or self._class_of(scope) is None:
                return ""  # a capitalized name is a class made (`Foo.new`), not a method called
            receiver = self.spec.implicit_receiver
        receiver = receiver.strip()
        path = bool(self.spec.path_separator) and self.spec.path_separator in receiver
        if path and receiver.endswith(self.spec.path_separator + name):  # `a::B::f`, the receiver of f: a::B
            receiver = receiver[:-len(self.spec.path_separator + name)]
        receiver = self._spelled(receiver)
        word = receiver.split("(", 1)[0].split(".", 1)[0]
        if word in self.spec.super_names:
            if receiver != word and not receiver.startswith(word + "("):
                return ""
            base = next(filter(None, (self._lookup(scope, word) for word in self.spec.super_names)), None)
            return self._type_hint(self._defining(base, name)) if base else SUPER
        if not _CHAIN.fullmatch(receiver):
            return self._chain(scope, receiver) if self.spec.result_type else ""
        head, *rest = receiver.split(".")
        if head in self.spec.self_names:
            if not rest:
                own = self._inherited(self._class_of(scope), name)
                if own == SELF and scope is not None and self._class_of(scope) == scope:
                    return f"{self.definitions[scope].name}@"  # in the class's own body: a method's scope is not there
                return own
            found = self._own_field(self._class_of(scope), rest[0])
            return self._type_hint(found) if found and len(rest) == 1 else ""
        bound = self._lookup(scope, head)
        if bound == CONFLICT and self.spec.result_type and not rest:
            return self._agreed(scope, head)
        if bound:  # a generic parameter's type: its bound (`x: T` where `T: Trait`)
            bound = self._lookup(scope, type_name(bound)) or bound
        if bound is not None:
            for field in rest:  # a field of a field: known while the classes are this file's
                known = self._field(bound, field) if bound else None
                if known is None:
                    return self._field_elsewhere(bound, field, scope) if bound else ""
                bound = known
            return self._type_hint(bound, scope) if bound else ""
        alias = self.aliases.get(head)
        if alias is not None:
            module, member = alias
            if not member:
                return f"@{_module_of(alias, receiver)}"
            if rest:  # Rust's `de::Error::custom` where a `use` binds de: in module de
                return _path_hint(f"{module}.{member}.{'.'.join(rest)}") if path else ""
            held = self.spec.constructors_capitalized and member.lstrip("_")[:1].islower()  # no class
            if held and name in self.spec.builtin_methods:
                return EXTERNAL  # a value a module holds, of a built-in type's method
            return f"{member}@{module}"
        if self.spec.constructors_capitalized and not rest and head in self.classes:
            return self._type_hint(self._defining(head, name))  # a class of this file, or its bases'
        if path and head[:1].islower():
            return _path_hint(receiver)
        if (self.spec.capitalized_types or self.spec.constructors_capitalized or (
                self.spec.names_from_imports and head not in self.defined)) and head in self.spec.builtin_types:
            return EXTERNAL  # a built-in type's static member (`Math.max`, `System.out`, `Object.keys`)
        if self.spec.capitalized_types and head[:1].isupper():
            return f"{head}@" if not rest and not head.isupper() else ""
        return ""

    def _builtin_function(self, name: str) -> bool:
        """Whether a bare call of `name` reaches the language's built-ins (the file defines no `name`)."""
        return name in self.spec.builtin_functions and name not in self.defined

    def _closure(self, scope: int | None, name: str) -> str:
        """LOCAL and the definition whose body declares a function literal `name` that a bare call
        in `scope` reaches (the innermost), or ""."""
        while scope is not None:
            if (scope, name) in self.named and self.definitions[scope].kind not in _CLASS_KINDS:
                return LOCAL + self.definitions[scope].qualified_name
            scope = self.definitions[scope].parent
        return ""

    def _chain(self, scope: int | None, text: str) -> str:
        """The hint of a value that calls make (ingest/call_chains.py): "" where it is not known;
        worked out once for a scope (a name bound to a long call is called on again and again)."""
        found = self.chains.get((scope, text))
        if found is None:
            self.chains[(scope, text)] = ""  # a value made from itself (`x = x.next()`) is not known
            found = self.chains[(scope, text)] = self._chain_of(scope, text)
        return found

    def _chain_of(self, scope: int | None, text: str) -> str:
        text, position = call_chains.positioned(text)
        if text.startswith(call_chains.RANGE):
            return self._ranged(scope, text[len(call_chains.RANGE):].strip(), position)
        found = self._calls_made(scope, text)
        return f"{found}{call_chains.INDEX}{position}" if position and found not in ("", EXTERNAL) else found

    def _field_elsewhere(self, type_text: str, field: str, scope: int | None) -> str:
        """A field of a type this file does not declare: a chain hint (`>.field`) where the
        type is an import's, whose fields resolution finds outside the repository where the
        import is (`r.Header` of an *http.Request); else not known here."""
        outer = self._type_hint(type_text, scope) if self.spec.result_type else ""
        if outer == EXTERNAL:
            return EXTERNAL
        return f"{outer}{call_chains.STEP}.{field}" if outer.partition("@")[2] else ""

    def _ranged(self, scope: int | None, value: str, position: int) -> str:
        """The hint of a `range` loop's name at `position` over `value`, where the type of value
        is declared in this file (a variable, or a field of this file's types)."""
        head, *rest = value.split(".") if _CHAIN.fullmatch(value) else [""]
        bound = self._lookup(scope, head) if head else None
        for field in rest:
            bound = self._field(bound, field) if bound else None
        element = call_chains.element_type(bound, position) if bound else ""
        return self._type_hint(element) if element else ""

    def _calls_made(self, scope: int | None, text: str) -> str:
        pieces = call_chains.parts(text)
        made = call_chains.made_type(pieces[0])
        if made is not None:
            base, rest = self._type_hint(made), pieces[1:]
        else:
            first = next((i for i, piece in enumerate(pieces) if call_chains.called(piece)), None)
            if first is None:
                return ""
            function = call_chains.called(pieces[first]) or ""
            if first == 0:
                known = self._builtin_function(function)
                local = self._closure(scope, function)  # a function literal: by its qualified name
                function = f"{local[len(LOCAL):]}.{function}" if local else function
                base = EXTERNAL if known else f"{function}{call_chains.RESULT}@"
            else:
                value = self.hint(scope, ".".join(pieces[:first]), function)
                if value.startswith("@"):  # a function of an imported package
                    base = f"{function}{call_chains.RESULT}{value}"
                elif "@" in value:
                    base = value + call_chains.STEP + function
                else:
                    base = EXTERNAL if value == EXTERNAL else ""
            rest = pieces[first + 1:]
        if base in ("", EXTERNAL) or "@" not in base:
            return base if base == EXTERNAL else ""
        steps = [call_chains.called(piece) for piece in rest]
        if any(step is None for step in steps):
            return ""  # a field of a call's result: its type is not known here
        chain = base + "".join(call_chains.STEP + step for step in steps if step)
        return chain if chain.count(call_chains.STEP) <= call_chains.MAX_STEPS else ""


def _path_hint(dotted: str) -> str:
    """The hint of a path through modules (`crate.de.Error`): a type in its module where it ends
    in a type's name (capitalized), else the module."""
    module, _, last = dotted.rpartition(".")
    return f"{last}@{module}" if module and last[:1].isupper() else f"@{dotted}"


def _module_of(alias: tuple[str, str], dotted: str) -> str:
    """The module a dotted receiver names through an import (`np.linalg` -> `numpy.linalg`)."""
    module, member = alias
    rest = dotted.split(".")[1:]
    if member:
        return module
    return ".".join([module, *rest]) if rest and "/" not in module else module
