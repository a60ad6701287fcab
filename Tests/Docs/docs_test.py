#!/usr/bin/python3
"""The man page and the shell completions against the binary they describe.

Run by `make man-test` after `make man completions`. The subcommands come from
the binary (`coverd --experimental-dump-help`), never from a list kept here, so
a subcommand added later must show up in the page and in every completion
script. The page is read as roff source (mdoc, as generate-manual writes it):
no man or groff needed. Each check prints "ok - ..." or "FAIL - ..."; the last
line counts them and the exit status is 1 when any failed.

Each checker is also run against doctored copies (each subcommand taken out
in turn), which it must reject: a checker that cannot fail proves nothing.
"""
import argparse
import json
import re
import shutil
import subprocess
import sys

PASSED = []
FAILED = []


def check(name, condition, detail=""):
    print(("ok" if condition else "FAIL") + " - " + name + ("" if condition or not detail else f"\n    {detail}"), flush=True)
    (PASSED if condition else FAILED).append(name)
    return condition


def commands(node, parents=()):
    """Every subcommand a user is shown, at any depth, as (path, command info)."""
    found = []
    for sub in node.get("subcommands") or []:
        if sub.get("shouldDisplay", True):
            path = parents + (sub["commandName"],)
            found.append((path, sub))
            found.extend(commands(sub, path))
    return found


def long_options(command):
    """The --long names of a command's visible options and flags."""
    names = set()
    for argument in command.get("arguments") or []:
        if argument.get("shouldDisplay", True):
            for name in argument.get("names") or []:
                if name["kind"] == "long":
                    names.add(name["name"])
    return names


def page_problems(page, root, subcommands):
    """What the page lacks: its frame, an entry (`.It Em name[, alias...]`) per subcommand, every long option."""
    problems = []
    lines = page.splitlines()
    for line in (f".Dt {root.upper()} 1", f".Nm {root}", ".Sh NAME", ".Sh SYNOPSIS", ".Sh DESCRIPTION"):
        if line not in lines:
            problems.append(f"no line {line!r}")
    entries = set()
    for line in lines:
        if line.startswith(".It Em "):
            entries.update(label.strip() for label in line[len(".It Em "):].strip('"').split(","))
    for path, _ in subcommands:
        if path[-1] not in entries:
            problems.append(f"no entry for the subcommand {' '.join(path)!r}")
    for path, command in subcommands:
        for option in sorted(long_options(command)):
            if not re.search(r"\bFl -" + re.escape(option) + r"\b", page):
                problems.append(f"no --{option} (of {' '.join(path)!r})")
    return problems


def mentions(script, name):
    """Whether a completion script names a subcommand as a whole word (`check-config`, not `check`)."""
    return re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", script) is not None


def script_problems(script, subcommands):
    return [f"does not mention {' '.join(path)!r}" for path, _ in subcommands if not mentions(script, path[-1])]


def doctor_page(page, name):
    """The page with the subcommand's entry line taken out."""
    return "\n".join(line for line in page.splitlines()
                     if not (line.startswith(".It Em ") and name in (l.strip() for l in line[7:].strip('"').split(","))))


def doctor_script(script, name):
    """The script with every whole-word mention of the subcommand renamed."""
    return re.sub(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", "renamed-away", script)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="the coverd binary the page and scripts were made from")
    parser.add_argument("--man", required=True, help="the man page (roff source)")
    parser.add_argument("--bash", required=True)
    parser.add_argument("--zsh", required=True)
    parser.add_argument("--fish", required=True)
    options = parser.parse_args()

    dump = subprocess.run([options.bin, "--experimental-dump-help"], capture_output=True, text=True)
    if not check("Given the binary, when asked for --experimental-dump-help, then it prints its commands as JSON",
                 dump.returncode == 0, dump.stderr):
        return finish()
    root = json.loads(dump.stdout)["command"]
    subcommands = commands(root)
    check("Given the binary's commands, then there are subcommands to look for", len(subcommands) > 0)
    # The contract's commands, so that one dropped from the binary is not a page that passes by naming less.
    contract = {"run", "status", "add", "verify", "check-config"}
    missing = contract - {path[0] for path, _ in subcommands}
    check("Given the binary's commands, then every command of the contract is there", not missing, f"missing: {sorted(missing)}")
    print(f"# subcommands, from the binary: {', '.join(' '.join(p) for p, _ in subcommands)}", flush=True)
    name = root["commandName"]

    with open(options.man, encoding="utf-8") as handle:
        page = handle.read()
    problems = page_problems(page, name, subcommands)
    check(f"Given the man page {options.man}, then it has NAME, SYNOPSIS, DESCRIPTION, every subcommand and every option",
          not problems, "; ".join(problems))
    missed = [" ".join(path) for path, _ in subcommands
              if f"no entry for the subcommand {' '.join(path)!r}" not in
              page_problems(doctor_page(page, path[-1]), name, subcommands)]
    check("Given the page with each subcommand's entry taken out in turn, then the checker names it missing",
          not missed, f"not caught: {', '.join(missed)}")

    for shell, path in (("bash", options.bash), ("zsh", options.zsh), ("fish", options.fish)):
        live = subprocess.run([options.bin, "--generate-completion-script", shell], capture_output=True, text=True)
        if not check(f"Given the binary, when asked for its {shell} completion script, then it prints one",
                     live.returncode == 0 and live.stdout.strip() != "", live.stderr):
            continue
        with open(path, encoding="utf-8") as handle:
            script = handle.read()
        check(f"Given {path}, then it is the binary's {shell} script as it is now", script == live.stdout)
        problems = script_problems(script, subcommands)
        check(f"Given the {shell} script, then it mentions every subcommand", not problems, "; ".join(problems))
        missed = [" ".join(path) for path, _ in subcommands
                  if f"does not mention {' '.join(path)!r}" not in
                  script_problems(doctor_script(script, path[-1]), subcommands)]
        check(f"Given the {shell} script with each subcommand renamed away in turn, then the checker names it missing",
              not missed, f"not caught: {', '.join(missed)}")
        # Syntax only where the shell is installed: bash always is; zsh and fish are not coverd's dependencies.
        interpreter = shutil.which(shell)
        if interpreter:
            syntax = subprocess.run([interpreter, "-n", path], capture_output=True, text=True)
            check(f"Given the {shell} script, when {shell} -n reads it, then it parses", syntax.returncode == 0,
                  syntax.stderr)
        else:
            print(f"# {shell} is not installed: its script's syntax is not checked", flush=True)
    return finish()


def finish():
    print(f"{len(PASSED)} passed, {len(FAILED)} failed", flush=True)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
