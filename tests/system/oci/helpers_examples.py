"""What the example tests share (test_examples.py, test_orchestrator_examples.py):
where the examples are, and readers of the files they check (durations,
the HCL of the Nomad job, the Dockerfile's stages)."""

import re

from conftest import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"
CONTAINER_CONFIG = EXAMPLES / "container" / "corral.yaml"


def seconds(duration):
    """A corral or Nomad duration ("1m30s", "20s", "500ms") in seconds."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    parts = re.findall(r"(\d+)(ms|h|m|s)", duration)
    assert parts and "".join(n + u for n, u in parts) == duration, duration
    return sum(int(number) * units[unit] for number, unit in parts)


def parse_hcl(text):
    """The subset of HCL the job uses: blocks with string labels,
    attributes whose values are strings, numbers, booleans or lists of
    them, and # or // comments. A block is {"labels": [...], "body": {...}};
    a body maps each attribute to its value and each block type to a list
    of blocks. Anything else raises."""
    token = re.compile(r'\s+|#[^\n]*|//[^\n]*|(?P<string>"(?:[^"\\]|\\.)*")'
                       r'|(?P<number>-?\d+(?:\.\d+)?)|(?P<word>[A-Za-z_][\w-]*)'
                       r'|(?P<punct>[{}\[\]=,])')
    tokens = []
    position = 0
    while position < len(text):
        match = token.match(text, position)
        if not match:
            raise ValueError(f"HCL: unexpected {text[position:position + 20]!r}")
        position = match.end()
        for kind in ("string", "number", "word", "punct"):
            if match.group(kind) is not None:
                tokens.append((kind, match.group(kind)))
    tokens.append(("end", None))
    index = 0

    def take(kind=None, value=None):
        nonlocal index
        got_kind, got_value = tokens[index]
        if (kind and got_kind != kind) or (value and got_value != value):
            raise ValueError(f"HCL: expected {value or kind}, got {got_value!r}")
        index += 1
        return got_value

    def value():
        kind, text_value = tokens[index]
        if kind == "string":
            take()
            return text_value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        if kind == "number":
            take()
            return float(text_value) if "." in text_value else int(text_value)
        if kind == "word" and text_value in ("true", "false"):
            take()
            return text_value == "true"
        take("punct", "[")
        items = []
        while tokens[index] != ("punct", "]"):
            items.append(value())
            if tokens[index] == ("punct", ","):
                take()
        take("punct", "]")
        return items

    def body(closing):
        result = {}
        while tokens[index] != closing:
            name = take("word")
            if tokens[index] == ("punct", "="):
                take()
                if name in result:
                    raise ValueError(f"HCL: {name} set twice")
                result[name] = value()
                continue
            labels = []
            while tokens[index][0] == "string":
                labels.append(take()[1:-1])
            take("punct", "{")
            block = {"labels": labels, "body": body(("punct", "}"))}
            take("punct", "}")
            result.setdefault(name, []).append(block)
        return result

    return body(("end", None))


def only(body, block_type):
    (block,) = body[block_type]
    return block


def dockerfile_stages(text):
    """[(FROM line, [(INSTRUCTION, arguments)])], continuation lines joined."""
    text = re.sub(r"\\\n", " ", text)
    stages = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, arguments = line.partition(" ")
        instruction = instruction.upper()
        if instruction == "FROM":
            stages.append((arguments, []))
        else:
            stages[-1][1].append((instruction, arguments.strip()))
    return stages
