"""What a command that prints a secret printed, asked of the gate by an importer that paired
the command with its output (stet_lsp/gate/printed.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from stet_lsp.gate import GateConfig
from stet_lsp.gate.printed import printed_secrets


def printed_values(
    command: str,
    output: str,
    config: GateConfig,
    *,
    succeeded: bool = True,
    harness_blank_lines: int = 0,
) -> list[str]:
    """The values `printed_secrets` finds, as they stand in the text it shows (none when it
    finds none)."""
    found = printed_secrets(
        command, output, config, succeeded=succeeded, harness_blank_lines=harness_blank_lines
    )
    if found is None:
        return []
    text, findings = found
    return [text[finding.offset : finding.end_offset] for finding in findings]


def test_the_module_loads_first_of_the_gate() -> None:
    """The rules' modules load each other: this one must not start that cycle halfway."""
    run = subprocess.run(
        [sys.executable, "-c", "import stet_lsp.gate.printed"], capture_output=True, text=True
    )
    assert (run.returncode, run.stderr) == (0, "")


@pytest.mark.parametrize(
    ("command", "output", "value"),
    [
        ("op read op://Private/db/password", "Xk9mQ2vLp8rT4wZ\n", "Xk9mQ2vLp8rT4wZ"),
        ("cd app\nvault kv get -field=password secret/db", "Hq7L!mP2xW\n", "Hq7L!mP2xW"),
        ("op read op://Private/db/password > .env", "", None),
        ("op read op://Private/db/password | wc -c", "      16\n", None),
        ("git status", "Xk9mQ2vLp8rT4wZ\n", None),
    ],
)
def test_the_first_line_a_printing_command_printed(
    command: str, output: str, value: str | None
) -> None:
    found = printed_secrets(command, output, GateConfig())
    if value is None:
        assert found is None
    else:
        assert found is not None
        text, findings = found
        assert [text[f.offset : f.end_offset] for f in findings] == [value]
        assert {f.rule for f in findings} == {"printed-secret"}


@pytest.mark.parametrize(
    ("command", "output", "values"),
    [
        (
            "op read op://Private/db/password\nop read op://Private/api/credential",
            "Xk9mQ2vLp8rT4wZ\nZt4kWq9Lm2Xp\n",
            ["Xk9mQ2vLp8rT4wZ", "Zt4kWq9Lm2Xp"],
        ),
        (
            "op read op://a/db/password && vault kv get -field=token secret/api",
            "Xk9mQ2vLp8rT4wZ\nhvs7Rk2mQ9xLp4Tz\n",
            ["Xk9mQ2vLp8rT4wZ", "hvs7Rk2mQ9xLp4Tz"],
        ),
        (
            'echo "db:"; op read op://a/db/password; echo "api:"; op read op://a/api/token',
            "db:\nXk9mQ2vLp8rT4wZ\napi:\nZt4kWq9Lm2Xp\n",
            ["Xk9mQ2vLp8rT4wZ", "Zt4kWq9Lm2Xp"],
        ),
        (
            "cd app\nop read op://a/db/password\nexport X=1\nop read op://a/api/token",
            "Xk9mQ2vLp8rT4wZ\nZt4kWq9Lm2Xp\n",
            ["Xk9mQ2vLp8rT4wZ", "Zt4kWq9Lm2Xp"],
        ),
        # What `ls` printed stands between the first value and the second: the first is
        # counted from the output's start, the second from its end.
        (
            "op read op://a/db/password; ls; op read op://a/api/token",
            "Xk9mQ2vLp8rT4wZ\nMakefile\nsetup-Config2024.yaml\nZt4kWq9Lm2Xp\n",
            ["Xk9mQ2vLp8rT4wZ", "Zt4kWq9Lm2Xp"],
        ),
        (
            "op read op://a/db/password\ngit rev-parse HEAD",
            "Xk9mQ2vLp8rT4wZ\n3f5f8c2a1b9d4e6f7a8b9c0d1e2f3a4b5c6d7e8f\n",
            ["Xk9mQ2vLp8rT4wZ"],
        ),
    ],
)
def test_each_line_several_printing_commands_printed(
    command: str, output: str, values: list[str]
) -> None:
    """Each printing command prints its value on a line of its own, in order; an `echo`
    before one prints a line of its own, and a command whose output is not known ends the
    pairing."""
    assert printed_values(command, output, GateConfig()) == values


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ("echo hi > /tmp/x; op read op://v/i/p", "Xk9vQ2mLp7RtZ\n"),
        ("echo start >> log && op read op://v/i/p", "Xk9vQ2mLp7RtZ\n"),
        ("echo start 1>&2; op read op://v/i/p", "Xk9vQ2mLp7RtZ\n"),
        ("echo > /dev/null; op read op://v/i/p", "Xk9vQ2mLp7RtZ\n"),
        ('echo "$PW" | sudo -S true; op read op://v/i/p', "Xk9vQ2mLp7RtZ\n"),
        ("test -f x || echo missing; op read op://v/i/p", "Xk9vQ2mLp7RtZ\n"),
        ('[ -n "$X" ] && echo set; op read op://v/i/p', "Xk9vQ2mLp7RtZ\n"),
        ("export X=1 && echo >/dev/null && op read op://v/i/p", "Xk9vQ2mLp7RtZ\n"),
        # The line the echo printed is blank: the output's blank lines before its first
        # that holds anything are not among its lines.
        ("echo; op read op://v/i/p", "\nXk9vQ2mLp7RtZ\n"),
        ('echo ""; op read op://v/i/p', "\nXk9vQ2mLp7RtZ\n"),
        ("echo $EMPTY; op read op://v/i/p", "\nXk9vQ2mLp7RtZ\n"),
        ("echo; op read op://v/i/p", "\r\n\r\nXk9vQ2mLp7RtZ\r\n"),
        # Or it printed a line after all: to the terminal's error output, which the
        # transcript keeps, or because the test before it failed.
        ("echo start 1>&2; op read op://v/i/p", "start\nXk9vQ2mLp7RtZ\n"),
        ("test -f x || echo missing; op read op://v/i/p", "missing\nXk9vQ2mLp7RtZ\n"),
        # More echoes that may print none than the pairing follows: the output's first
        # line is still asked of the command's last.
        ("test -f x || echo missing; " * 9 + "op read op://v/i/p", "Xk9vQ2mLp7RtZ\n"),
    ],
)
def test_the_line_after_an_echo_that_may_have_printed_none(command: str, output: str) -> None:
    """An echo whose line goes elsewhere (`> file`, `1>&2`, `| …`), or that runs only when
    the command before it failed or succeeded, prints a line or none: the printing command
    after it printed either line."""
    assert printed_values(command, output, GateConfig()) == ["Xk9vQ2mLp7RtZ"]


def test_each_value_after_an_echo_that_may_have_printed_none() -> None:
    command = '[ -n "$X" ] && echo set; op read op://a/db/password; op read op://a/api/token'
    assert printed_values(command, "Xk9mQ2vLp8rT4wZ\nZt4kWq9Lm2Xp\n", GateConfig()) == [
        "Xk9mQ2vLp8rT4wZ",
        "Zt4kWq9Lm2Xp",
    ]


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ("ls; op read op://v/i/p", "README.md\nsetup-Config2024.yaml\nQx7Vt9Lm2Rk4Z\n"),
        ("ls\necho\nop read op://v/i/p", "README.md\nsetup-Config2024.yaml\n\nQx7Vt9Lm2Rk4Z\n"),
        ("echo user:; ls -d /x; op read op://v/i/p", "user:\n/x\nQx7Vt9Lm2Rk4Z\n"),
        ("git log -1 --format=%h; op read op://v/i/p", "build-7f3a9c2d1e\nQx7Vt9Lm2Rk4Z\n"),
        ('python -c "x=1\nprint(x)"; op read op://v/i/p', "1\nQx7Vt9Lm2Rk4Z\n"),
        ("make; op read op://v/i/p > /dev/tty; op read op://v/i/p", "Makefile\nQx7Vt9Lm2Rk4Z"),
        ("ls; op read op://v/i/p; chmod 600 .env; echo done", "Makefile\nQx7Vt9Lm2Rk4Z\ndone\n"),
        ("ls; op read op://v/i/p || echo failed", "setup-Config2024.yaml\nQx7Vt9Lm2Rk4Z\n"),
        ("ls; op read op://v/i/p && echo ok >> log", "setup-Config2024.yaml\nQx7Vt9Lm2Rk4Z\n"),
    ],
)
def test_the_line_a_last_printing_command_printed_after_other_lines(
    command: str, output: str
) -> None:
    """Where the lines another command printed before the printing command end is not known:
    counted from the output's end, past what the commands after it print (nothing, or an
    echo's line), the value is found, and no line the other command printed is."""
    assert printed_values(command, output, GateConfig()) == ["Qx7Vt9Lm2Rk4Z"]


@pytest.mark.parametrize(
    ("command", "output", "succeeded"),
    [
        # the call failed: the printing command's error, not its value, ends the output, or
        # the harness put the error first
        ("ls; op read op://v/i/p", "README.md\nsetup-Config2024.yaml\n", False),
        (
            "ls; op read op://v/i/p",
            "[ERROR] item not found\nMakefile\nsetup-Config2024.yaml",
            False,
        ),
        # what a command in the background prints may come after the value
        ("ls & op read op://v/i/p", "Qx7Vt9Lm2Rk4Z\nsetup-Config2024.yaml\n", True),
        ("sleep 1 && ls & op read op://v/i/p", "Qx7Vt9Lm2Rk4Z\nsetup-Config2024.yaml\n", True),
        # a command after the printing one prints lines of its own
        ("ls; op read op://v/i/p; ls", "Makefile\nQx7Vt9Lm2Rk4Z\nsetup-Config2024.yaml\n", True),
        # the echo that may print none did not: the next line is what `ls` printed
        ("test -f x || echo missing; op read op://v/i/p; ls", "Qx7Vt9Lm2Rk4Z\nMakefile\n", True),
        ("ls; op read op://v/i/p || echo failed", "setup-Config2024.yaml\nQx7Vt9Lm2Rk4Z\n", True),
        # the value printed is empty: the blank line no echo printed is the value's
        ("ls; op read op://v/i/p", "Makefile\nsetup-Config2024.yaml\n\n", True),
        ("op read op://v/i/p; ls", "\nsetup-Config2024.yaml\nMakefile\n", True),
        ("op read op://v/i/p\necho; ls", "\n\nsetup-Config2024.yaml\n", True),
        # the command's last line with the output's first, when it has more than one line
        ("ls\nop read op://v/i/p", "setup-Config2024.yaml\nsrc\nQx7Vt9Lm2Rk4Z\n", True),
        ("ls\nop read op://v/i/p", "setup-Config2024.yaml\n[ERROR] item not found\n", False),
    ],
)
def test_no_line_another_command_printed_is_taken_for_a_value(
    command: str, output: str, succeeded: bool
) -> None:
    """A line another command may have printed is never taken for a value: taken, it would
    be redacted wherever it stands in the session."""
    values = printed_values(command, output, GateConfig(), succeeded=succeeded)
    assert not {"setup-Config2024.yaml", "Makefile"} & set(values)


def test_a_value_in_the_command_itself_is_not_what_it_printed() -> None:
    """A commit message holding the command and a value on its next line: the command's own
    text is not its output."""
    command = r'git commit -m "op read op://v/i/p\nQx7Vt9Lm2Rk4Zp8W"'
    assert printed_secrets(command, "[main 1a2b3c] done\n", GateConfig()) is None


TWO_VALUES = "Xk9mQ2vLp8rT4wZ\nZt4kWq9Lm2Xp7Hn\n"


@pytest.mark.parametrize(
    "command",
    [
        "eval $(op signin); op read op://v/i/user; op read op://v/i/password",
        "mkdir -p out && op read op://v/a/x && op read op://v/b/y",
        "sleep 1; vault kv get -field=user secret/a; vault kv get -field=password secret/a",
        ": ${X:=1}; op read op://v/i/user; op read op://v/i/password",
        "[ -f x ] > /dev/null; op read op://v/i/user; op read op://v/i/password",
        "make > build.log; op read op://v/i/user; op read op://v/i/password",
        "(( n++ )); op read op://v/i/user; op read op://v/i/password",
    ],
)
def test_a_command_that_prints_nothing_leaves_the_pairing_going(command: str) -> None:
    """A command that changes files or the shell quietly, or sends its output to a file,
    prints no line: the printing commands after it are still paired each with its own."""
    assert printed_values(command, TWO_VALUES, GateConfig()) == TWO_VALUES.split()


@pytest.mark.parametrize(
    "command",
    [
        "# " + "x" * 3000 + "\necho user:\nop read op://v/i/password",
        'export CERT="' + "A" * 3000 + '"; echo user:; op read op://v/i/password',
        "CERT=" + "A" * 3000 + "; echo user:; op read op://v/i/password",
    ],
)
def test_a_long_quiet_command_is_known_by_its_start(command: str) -> None:
    """A command is shown by its end, but what kind it is is read from all of it: a long
    comment or assignment is still one that prints nothing."""
    assert printed_values(command, "user:\nXk9mQ2vLp8rT4wZ\n", GateConfig()) == ["Xk9mQ2vLp8rT4wZ"]


@pytest.mark.parametrize(
    ("command", "output", "values"),
    [
        (
            'echo "user;name:"; op read op://v/i/p',
            "user;name:\nXk9mQ2vLp8rT4wZ\n",
            ["Xk9mQ2vLp8rT4wZ"],
        ),
        ("echo 'a && b:' && op read op://v/i/p", "a && b:\nXk9mQ2vLp8rT4wZ\n", ["Xk9mQ2vLp8rT4wZ"]),
        (
            'MSG="hi; there"; echo "a;b"; op read op://v/i/p',
            "a;b\nXk9mQ2vLp8rT4wZ\n",
            ["Xk9mQ2vLp8rT4wZ"],
        ),
        (
            'DIR="$(cd app; pwd)"; echo user:\nop read op://v/i/p',
            "user:\nXk9mQ2vLp8rT4wZ\n",
            ["Xk9mQ2vLp8rT4wZ"],
        ),
        (
            "# don't print; it\necho user:; op read op://v/i/p",
            "user:\nXk9mQ2vLp8rT4wZ\n",
            ["Xk9mQ2vLp8rT4wZ"],
        ),
        (
            ': "one\nls; two"; op read op://v/i/p; op read op://v/i/token',
            "Xk9mQ2vLp8rT4wZ\nZt4kWq9Lm2Xp\n",
            ["Xk9mQ2vLp8rT4wZ", "Zt4kWq9Lm2Xp"],
        ),
    ],
)
def test_a_command_break_in_quotes_ends_no_command(
    command: str, output: str, values: list[str]
) -> None:
    """A `;`, `&&` or new line in quotes, in `$(…)` or in a comment ends no command: the
    command holding it is one, and what kind it is is read from all of it."""
    assert printed_values(command, output, GateConfig()) == values


@pytest.mark.parametrize(
    ("command", "output"),
    [
        # a new line in quotes: the echo prints two lines, or more
        ('echo "user:\nls"; op read op://v/i/p', "user:\nls\nXk9mQ2vLp8rT4wZ\n"),
        # the printing command's name in a message, a value on the message's next line
        (
            'git commit -m "op read op://v/i/p\nQx7Vt9Lm2Rk4Zp8W"; ls',
            "[main 1a2b3c] done\nQx7Vt9Lm2Rk4Zp8W\n",
        ),
    ],
)
def test_a_line_in_quotes_is_no_command_of_its_own(command: str, output: str) -> None:
    values = printed_values(command, output, GateConfig())
    assert "Qx7Vt9Lm2Rk4Zp8W" not in values and "ls" not in values


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ('echo "$DB_PASSWORD"', "Xk9mQ2vLp8rT4wZ\n"),
        ("echo $API_TOKEN", "Xk9mQ2vLp8rT4wZ\n"),
        ("printf '%s\\n' \"$SECRET_KEY\"", "Xk9mQ2vLp8rT4wZ\n"),
        ("printenv GITHUB_TOKEN", "Xk9mQ2vLp8rT4wZ\n"),
        ('echo "user: $DB_USER"; echo "$DB_PASSWORD"', "user: admin\nXk9mQ2vLp8rT4wZ\n"),
        ("ls; printenv GITHUB_TOKEN", "README.md\nsetup-Config2024.yaml\nXk9mQ2vLp8rT4wZ\n"),
    ],
)
def test_an_echo_of_a_credential_s_variable_prints_its_value(command: str, output: str) -> None:
    """`echo`, `printf` and `printenv` of a variable named for a credential print its value
    on a line of its own."""
    assert printed_values(command, output, GateConfig()) == ["Xk9mQ2vLp8rT4wZ"]


@pytest.mark.parametrize(
    "command",
    [
        "echo $HOME; op read op://v/i/p",
        'echo "$PATH"; op read op://v/i/p',
        "echo $PWD && op read op://v/i/p",
        "echo $TOKEN_PATH; op read op://v/i/p",
    ],
)
def test_an_echo_of_another_variable_prints_a_line_of_its_own(command: str) -> None:
    assert printed_values(command, "Setup-Config2024\nXk9mQ2vLp8rT4wZ\n", GateConfig()) == [
        "Xk9mQ2vLp8rT4wZ"
    ]


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ("echo $PASS", "128/130\n"),
        ('echo "$TESTS_PASS"', "128/130\n"),
        ("ls; echo $NUM_PASS", "src\n128/130\n"),
    ],
)
def test_a_count_of_tests_passed_is_no_password(command: str, output: str) -> None:
    assert printed_secrets(command, output, GateConfig()) is None


@pytest.mark.parametrize(
    "command", ['echo -e "$DB_PASSWORD"', 'echo -ne "$DB_PASSWORD"', 'echo -E "$API_TOKEN"']
)
def test_an_echo_with_flags_of_a_credential_s_variable_prints_its_value(command: str) -> None:
    assert printed_values(command, "Xk9mQ2vLp8rT4wZ\n", GateConfig()) == ["Xk9mQ2vLp8rT4wZ"]


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ("grep -rl 'echo $API_TOKEN' .", "Makefile\n"),
        ('grep -rl "printenv GITHUB_TOKEN" .', "Makefile\nDockerfile\n"),
        ("git grep -l 'printenv NPM_TOKEN'", "Dockerfile\n"),
        ("git commit -qm 'ci: stop echo $GITHUB_TOKEN'; git branch --show-current", "ci-fix-2\n"),
        ("rg -l 'op read op://' .", "Makefile\nDockerfile\n"),
        ("xargs echo $API_TOKEN < list", "Makefile\n"),
    ],
)
def test_a_printing_command_s_text_in_another_s_arguments_prints_nothing(
    command: str, output: str
) -> None:
    """A printing command is the command itself, its name first: in another command's
    quoted argument it is text, and that command's lines are no value."""
    assert printed_secrets(command, output, GateConfig()) is None


@pytest.mark.parametrize(
    "command",
    [
        "LANG=C op read op://v/i/p",
        'OP_ACCOUNT="my team" op read op://v/i/p',
        "sudo printenv GITHUB_TOKEN",
        "env OP_ACCOUNT=x op read op://v/i/p",
        "time vault kv get -field=password secret/db",
        "command op read op://v/i/p",
    ],
)
def test_a_printing_command_after_what_runs_it_prints_its_value(command: str) -> None:
    assert printed_values(command, "Xk9mQ2vLp8rT4wZ\n", GateConfig()) == ["Xk9mQ2vLp8rT4wZ"]


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ("git checkout main && op read op://v/i/password", "Switched to branch 'main'\n"),
        ("git fetch && op read op://v/i/password", "From github.com:o/r\n * branch main -> x\n"),
        ("pip install -q x && vault kv get -field=password secret/db", "WARNING: Running pip\n"),
        ("docker compose up -d && terraform output -raw db_password", " Container db  Started\n"),
    ],
)
def test_the_value_before_what_another_command_wrote_to_its_error_output(
    command: str, output: str
) -> None:
    """A harness puts the error output after the output: what an earlier command wrote
    there ends the output, after the value the last command printed first."""
    assert printed_values(command, "Xk9mQ2vLp8rT4wZ\n" + output, GateConfig()) == [
        "Xk9mQ2vLp8rT4wZ"
    ]


@pytest.mark.parametrize(
    ("command", "output", "succeeded"),
    [
        # a variable not set: `printenv` prints nothing (and fails), `echo -n` and `printf
        # '%s'` nothing either; the lines are what the other commands printed
        ("printenv GITHUB_TOKEN; ls", "Makefile\nsrc\n", True),
        ("printenv AWS_SECRET_ACCESS_KEY; aws configure get region", "us-east-1\n", True),
        ("ls; printenv GITHUB_TOKEN || true", "src\nDockerfile\n", True),
        ("ls; printenv GITHUB_TOKEN; echo done", "src\nMakefile\ndone\n", True),
        ("ls; printenv GITHUB_TOKEN", "src\nMakefile\n", False),
        ('echo -n "$DB_PASSWORD"; ls', "Makefile\nsrc\n", True),
        ("ls; printf '%s' \"$API_TOKEN\"", "src\nMakefile\n", True),
        ('ls; echo -ne "$API_TOKEN"', "src\nMakefile\n", True),
        # several variables: a line each that is set, the last another's
        ("printenv GITHUB_TOKEN GITHUB_REPOSITORY", "Xk9mQ2vLp8rT4wZ\nocto-org/web-app\n", True),
        ('printf \'%s\\n\' "$API_TOKEN" "$AWS_REGION"', "Xk9mQ2vLp8rT4wZ\nus-east-1\n", True),
        ("printenv NPM_TOKEN NODE_ENV", "production\n", False),
    ],
)
def test_a_print_that_may_print_no_line_or_several_takes_no_other_line(
    command: str, output: str, succeeded: bool
) -> None:
    values = printed_values(command, output, GateConfig(), succeeded=succeeded)
    assert not {"Makefile", "Dockerfile", "us-east-1", "octo-org/web-app", "production"} & set(
        values
    )


@pytest.mark.parametrize(
    ("command", "output", "succeeded"),
    [
        ('printf \'%s\\n\' "$DB_PASSWORD" "$API_TOKEN"', TWO_VALUES, True),
        ('printf \'%s\\n\' "${DB_PASSWORD}" "$API_TOKEN"; ls', TWO_VALUES + "Makefile\n", True),
        ('ls; printf "%s\\n" "$DB_PASSWORD" "$API_TOKEN"', "Makefile\n" + TWO_VALUES, True),
        ('echo db:; printf \'%s\\n\' "$DB_PASSWORD" "$API_TOKEN"', "db:\n" + TWO_VALUES, True),
        # printenv surely succeeded (it is the call's last command): every variable is set
        ("printenv DB_PASSWORD API_TOKEN", TWO_VALUES, True),
        ("ls; printenv DB_PASSWORD API_TOKEN", "src\nMakefile\n" + TWO_VALUES, True),
        # or it is the only command that prints, and printed a line for each
        ("printenv DB_PASSWORD API_TOKEN || true", TWO_VALUES, True),
        ("cd app; printenv DB_PASSWORD API_TOKEN", TWO_VALUES, False),
    ],
)
def test_a_print_of_several_variables_prints_a_line_each(
    command: str, output: str, succeeded: bool
) -> None:
    """`printf '%s\\n'` prints each of its variables on a line of its own, `printenv` each
    that is set: where the lines before and after theirs are known, each is the value of
    its variable."""
    values = printed_values(command, output, GateConfig(), succeeded=succeeded)
    assert sorted(values) == TWO_VALUES.split()


@pytest.mark.parametrize(
    ("command", "output", "succeeded"),
    [
        # one of the two is set: which one is not known
        ("printenv DB_PASSWORD API_TOKEN", "setup-Config2024.yaml\n", False),
        ("printenv DB_PASSWORD API_TOKEN || true", "setup-Config2024.yaml\n", True),
        (
            "ls; printenv DB_PASSWORD API_TOKEN || true",
            "src\nMakefile\nsetup-Config2024.yaml\n",
            True,
        ),
        ("printenv DB_PASSWORD API_TOKEN; ls", "Xk9mQ2vLp8rT4wZ\nsetup-Config2024.yaml\n", True),
        # another variable's value, after or before a credential's
        ("printenv API_TOKEN AWS_REGION", "Xk9mQ2vLp8rT4wZ\nsetup-Config2024.yaml\n", True),
        ("printenv AWS_REGION API_TOKEN", "setup-Config2024.yaml\nXk9mQ2vLp8rT4wZ\n", True),
        (
            'ls; printf \'%s\\n\' "$API_TOKEN" "$APP_CONFIG"',
            "Xk9mQ2vLp8rT4wZ\nsetup-Config2024.yaml\n",
            True,
        ),
        # unquoted, a value with blanks is split into several lines
        ("printf '%s\\n' $APP_NAME $API_TOKEN; ls", "my\nsetup-Config2024.yaml\nMakefile\n", True),
        # an unquoted `%s\n` is `%sn` to the shell: all on one line, and `ls` then prints
        (
            'printf %s\\n "$AWS_REGION" "$API_TOKEN"; ls',
            "us-east-1nVnsetup-Config2024.yaml\n",
            True,
        ),
        (
            'printf %s\\n "$AWS_REGION" "$API_TOKEN"; ls',
            "us-east-1nVn\nsetup-Config2024.yaml\n",
            True,
        ),
        # all on one line, or a line that may be the echo's
        ('printf \'%s\' "$DB_PASSWORD" "$API_TOKEN"', "setup-Config2024.yaml", True),
        (
            "test -f x || echo missing; printenv DB_PASSWORD API_TOKEN || true",
            "setup-Config2024.yaml\nXk9mQ2vLp8rT4wZ\n",
            True,
        ),
    ],
)
def test_a_print_of_several_variables_takes_no_line_not_surely_a_credential_s(
    command: str, output: str, succeeded: bool
) -> None:
    assert "setup-Config2024.yaml" not in printed_values(
        command, output, GateConfig(), succeeded=succeeded
    )


@pytest.mark.parametrize(
    ("command", "output", "succeeded"),
    [
        # it succeeded, as the call did: the variable is set
        ("printenv GITHUB_TOKEN && ls", "Xk9mQ2vLp8rT4wZ\nMakefile\n", True),
        ("ls; printenv GITHUB_TOKEN", "Makefile\nXk9mQ2vLp8rT4wZ\n", True),
        ("ls && cd app && printenv GITHUB_TOKEN", "Makefile\nXk9mQ2vLp8rT4wZ\n", True),
        # the only command that prints: its value, or nothing
        ("printenv GITHUB_TOKEN || true", "Xk9mQ2vLp8rT4wZ\n", True),
        ('cd app; echo -n "$DB_PASSWORD"', "Xk9mQ2vLp8rT4wZ", True),
        ("printf '%s' \"$API_TOKEN\"", "Xk9mQ2vLp8rT4wZ", True),
        ("printf '%s' \"$API_TOKEN\"; true", "Xk9mQ2vLp8rT4wZ\n", False),
    ],
)
def test_a_print_that_may_print_no_line_prints_its_value_where_that_is_known(
    command: str, output: str, succeeded: bool
) -> None:
    assert printed_values(command, output, GateConfig(), succeeded=succeeded) == ["Xk9mQ2vLp8rT4wZ"]


@pytest.mark.parametrize(
    ("command", "output", "value"),
    [
        # a variable set: its value is the first line, what `ls` printed the others
        ("printenv GITHUB_TOKEN; ls", "Xk9mQ2vLp8rT4wZ\nMakefile\nsrc\n", "Xk9mQ2vLp8rT4wZ"),
        ("printenv GITHUB_TOKEN\nls -1", "Xk9mQ2vLp8rT4wZ\r\nMakefile\r\n", "Xk9mQ2vLp8rT4wZ"),
        ("cd app && printenv API_TOKEN; git status -s", "Zt4kWq9Lm2Xp\n M a.py\n", "Zt4kWq9Lm2Xp"),
        (
            "ls; printenv GITHUB_TOKEN || true",
            "src\nDockerfile\nXk9mQ2vLp8rT4wZ\n",
            "Xk9mQ2vLp8rT4wZ",
        ),
        # glued to the first line `ls` printed: the value is inside what is taken
        ('echo -n "$DB_PASSWORD"; ls', "Xk9mQ2vLp8rT4wZMakefile\nsrc\n", "Xk9mQ2vLp8rT4wZMakefile"),
    ],
)
def test_a_generated_value_a_print_that_may_print_none_printed_before_other_lines(
    command: str, output: str, value: str
) -> None:
    """The line a print that may print none (`printenv X` of a variable not set) printed is
    its value or what the command after it printed: taken when it reads as generated, which
    a file's or a branch's name does not."""
    assert printed_values(command, output, GateConfig()) == [value]


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ("printenv GITHUB_TOKEN; ls", "setup-Config2024.yaml\nsrc\n"),
        ("printenv GITHUB_TOKEN; git branch --show-current", "feature/ABC-123-fix\n"),
        ("printenv GITHUB_TOKEN; git rev-parse HEAD", "3f5f8c2a1b9d4e6f7a8b9c0d1e2f3a4b5c6d7e8f\n"),
        ("ls; printenv GITHUB_TOKEN || true", "src\nSetup-Config2024\n"),
        ('echo -n "$DB_PASSWORD"; ls', "setup-Config2024.yaml\n"),
    ],
)
def test_a_written_line_a_print_that_may_print_none_stood_before_stays(
    command: str, output: str
) -> None:
    assert printed_values(command, output, GateConfig()) == []


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ('echo -n "$DB_PASSWORD"; echo done', "Hq7L!mP2xWdone\n"),
        ('echo -n "$DB_PASSWORD"; echo done', "Hq7L!mP2xWdone\r\n"),
        ('echo -n "$DB_PASSWORD" && echo " is set"', "Hq7L!mP2xW is set\n"),
        ("echo -n $DB_PASSWORD\ncd app\necho 'all set'", "Hq7L!mP2xWall set\n"),
        ('ls; echo -n "$DB_PASSWORD"; echo', "Makefile\nHq7L!mP2xW\n"),
        ("printf '%s' \"$DB_PASSWORD\"; echo; ls", "Hq7L!mP2xW\nMakefile\n"),
        ('echo -n "$DB_PASSWORD"; echo; op read op://v/i/token', "Hq7L!mP2xW\nZt4kWq9Lm2Xp\n"),
        # unquoted, `%s\n` is `%sn`: the value, then `n`, and no line end
        ('printf %s\\n "$DB_PASSWORD"', "Hq7L!mP2xWn"),
        ('printf %s\\n "$DB_PASSWORD"; echo done', "Hq7L!mP2xWndone\n"),
        ('ls; printf %s\\n "$DB_PASSWORD"; echo', "Makefile\nHq7L!mP2xWn\n"),
    ],
)
def test_a_value_whose_line_an_echo_ends_is_found_alone(command: str, output: str) -> None:
    """A print that ends no line (`echo -n "$X"`, `printf '%s' "$X"`) and an `echo` of
    known words after it print one line: the value, then those words. The value alone is
    found, however it reads, so it is redacted where it stands again."""
    values = printed_values(command, output, GateConfig())
    assert "Hq7L!mP2xW" in values
    assert "Makefile" not in values


@pytest.mark.parametrize(
    ("command", "output"),
    [
        # the variable is empty: the line is the echo's alone
        ('echo -n "$DB_PASSWORD"; echo done', "done\n"),
        ('echo -n "$DB_PASSWORD"; echo setup-Config2024', "setup-Config2024\n"),
        # the echo's line is not the value's
        ('ls; printf %s\\n "$DB_PASSWORD"; echo done', "setup-Config2024.yaml\nndone\n"),
        ('ls; echo -n "$DB_PASSWORD"; echo', "setup-Config2024.yaml\n\n"),
    ],
)
def test_the_line_an_echo_ends_holds_no_other_line(command: str, output: str) -> None:
    assert printed_values(command, output, GateConfig()) == []


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ("cat > get.sh <<'EOF'\nop read op://v/i/password\nEOF\nls", "Makefile\nget.sh\n"),
        ('cat > get.sh <<EOF\necho "$DB_PASSWORD"\nEOF\nchmod +x get.sh && ls', "Makefile\n"),
        ("cat <<-EOF > x\n\top read op://v/i/p\n\tEOF\nls", "Makefile\n"),
        ("cat > x <<A <<B\nop read a\nA\nop read b\nB\nls", "Makefile\n"),
        # arithmetic on the line: its `((` opens no group, its `<<` shifts bits
        (
            "(( n++ )); cat > get.sh <<'EOF'\nop read op://v/i/password\nEOF\nls",
            "setup-Config2024.yaml\n",
        ),
        ("n=$((n+1)); cat > x <<EOF\nop read op://v/i/p\nEOF\nls", "setup-Config2024.yaml\n"),
        ("x=$((1<<2)); cat > x <<EOF\nop read op://v/i/p\nEOF\nls", "setup-Config2024.yaml\n"),
    ],
)
def test_a_here_document_s_lines_are_no_commands(command: str, output: str) -> None:
    """A script written with a here-document holds a printing command: it is the body's
    text, and the other command's lines are no value."""
    assert printed_secrets(command, output, GateConfig()) is None


@pytest.mark.parametrize(
    "command",
    [
        "cat > x <<EOF\nit's done\nEOF\nop read op://v/i/p; ls",
        "cat > x <<'EOF' && op read op://v/i/p; ls\nbody\nEOF\n",
    ],
)
def test_the_commands_around_a_here_document_are_paired(command: str) -> None:
    """A quote in the body opens none: the commands after it are read as the shell reads
    them."""
    assert printed_values(command, "Xk9mQ2vLp8rT4wZ\nMakefile\n", GateConfig()) == [
        "Xk9mQ2vLp8rT4wZ"
    ]


@pytest.mark.parametrize(
    "command",
    [
        "{ op read op://v/i/password; }",
        "for f in a; do op read op://v/$f/password; done",
        "if true; then op read op://v/i/password; fi",
        "git checkout main && { op read op://v/i/password; }",
    ],
)
def test_a_printing_command_in_a_group_or_a_body_prints_its_value(command: str) -> None:
    assert printed_values(
        command, "Xk9mQ2vLp8rT4wZ\nSwitched to branch 'main'\n", GateConfig()
    ) == ["Xk9mQ2vLp8rT4wZ"]


@pytest.mark.parametrize(
    "command",
    [
        "ssh host 'op read op://v/i/password'",
        "ssh -i key.pem -p 2222 deploy@host 'op read op://v/i/password'",
        "ssh host op read op://v/i/password",
        "bash -lc 'op read op://v/i/password'",
        'sh -c "vault kv get -field=password secret/db"',
        "docker exec -it app printenv GITHUB_TOKEN",
        "kubectl exec pod-1 -c app -- printenv GITHUB_TOKEN",
        "ls; ssh host 'op read op://v/i/password'",
    ],
)
def test_a_printing_command_run_elsewhere_prints_its_value(command: str) -> None:
    """A command another runs (over ssh, in a shell, in a container) prints its value as if
    run here: the printing command is the one after the runner, quoted or not."""
    output = "Makefile\nXk9mQ2vLp8rT4wZ\n" if command.startswith("ls;") else "Xk9mQ2vLp8rT4wZ\n"
    assert printed_values(command, output, GateConfig()) == ["Xk9mQ2vLp8rT4wZ"]


def test_a_runner_of_a_command_that_prints_no_value_prints_none() -> None:
    assert printed_secrets("ssh host 'grep -rl op read .'", "Makefile\n", GateConfig()) is None


@pytest.mark.parametrize(
    "command",
    [
        "ls; op read -o /tmp/k op://v/i/password",
        "ls; op read --out-file=/tmp/k op://v/i/password",
        "op read --out-file x.pem op://v/i/key; ls",
    ],
)
def test_a_secret_written_to_a_file_is_printed_on_no_line(command: str) -> None:
    values = printed_values(command, "src\nMakefile\n", GateConfig())
    assert "Makefile" not in values


OP_ERROR = "[ERROR] 2026/01/01 10:00:00 could not read secret 'op://v/i/p': item not found"


@pytest.mark.parametrize(
    "command",
    [
        "ls; op read op://v/i/p; true",
        "ls\nop read op://v/i/p\ntrue",
        "ls -la; op read op://v/i/p || true",
        "cd app && ls; op read op://v/i/p; :",
        "pwd; echo files:; ls; op read op://v/i/p; true",
    ],
)
def test_the_lines_before_a_read_whose_error_the_output_starts_with_are_no_value(
    command: str,
) -> None:
    """A harness that puts the error output first shows the `op read` failed: it printed no
    value, and the last line, what `ls` printed, is not taken for one."""
    output = f"{OP_ERROR}\nMakefile\nsetup-Config2024.yaml\n"
    assert printed_values(command, output, GateConfig()) == []


@pytest.mark.parametrize(
    ("command", "output"),
    [
        # no error: the read may have succeeded
        ("ls; op read op://v/i/p; true", "Makefile\nsetup-Config2024.yaml\nHq7L!mP2xW\n"),
        # the error may be another command's, the read may have succeeded
        ("op signin; ls; op read op://v/i/p; true", f"{OP_ERROR}\nMakefile\nHq7L!mP2xW\n"),
        ("./load.sh; op read op://v/i/p; true", f"{OP_ERROR}\nMakefile\nHq7L!mP2xW\n"),
        ("cat app.log; op read op://v/i/p; true", f"{OP_ERROR}\nMakefile\nHq7L!mP2xW\n"),
        (f'echo "{OP_ERROR}"; op read op://v/i/p; true', f"{OP_ERROR}\nHq7L!mP2xW\n"),
        ("op read op://a/b/c; op read op://v/i/p; true", f"{OP_ERROR}\nHq7L!mP2xW\n"),
        # it surely succeeded: the call's last command, or joined to it by `&&`
        ("ls; op read op://v/i/p", f"{OP_ERROR}\nMakefile\nHq7L!mP2xW\n"),
        ("ls; op read op://v/i/p && true", f"{OP_ERROR}\nMakefile\nHq7L!mP2xW\n"),
        # the read failed; another printing command's value is still found
        ('op read op://a/b/c; echo "$DB_PASSWORD"; true', f"{OP_ERROR}\nHq7L!mP2xW\n"),
        ('ls; op read op://a/b/c; echo "$DB_PASSWORD"; true', f"{OP_ERROR}\nsrc\nHq7L!mP2xW\n"),
    ],
)
def test_a_value_a_read_may_have_printed_is_still_found(command: str, output: str) -> None:
    assert printed_values(command, output, GateConfig()) == ["Hq7L!mP2xW"]


def test_a_generated_line_after_a_read_that_failed_is_still_taken() -> None:
    """What the pairing cannot tell from a value, as after a print that may print none."""
    output = f"{OP_ERROR}\nMakefile\nXk9mQ2vLp8rT4wZ\n"
    assert printed_values("ls; op read op://v/i/p; true", output, GateConfig()) == [
        "Xk9mQ2vLp8rT4wZ"
    ]


@pytest.mark.parametrize(
    "command",
    [
        "op read op://v/i/p 2>/dev/null",
        "op read op://v/i/p 2> /dev/null",
        "op read op://v/i/p 2>>errors.log",
        "op read op://v/i/p 2>&1",
        "printenv DB_PASSWORD 2>/dev/null",
        'echo "$DB_PASSWORD" 2>/dev/null',
        "printf '%s\\n' \"$DB_PASSWORD\" 2>&1",
        "cd /app && printenv DB_PASSWORD 2>/dev/null",
    ],
)
def test_a_print_whose_errors_alone_go_elsewhere_still_prints_its_value(command: str) -> None:
    """`2>/dev/null` sends a command's errors away, not what it prints: any `>` was read as
    its output sent to a file, and the value was left in clear."""
    assert printed_values(command, "Hq7L!mP2xW\n", GateConfig()) == ["Hq7L!mP2xW"]


@pytest.mark.parametrize(
    ("command", "values"),
    [
        ("op read op://v/i/p; ls", ["hunter2Summer"]),
        ('echo "$DB_PASSWORD"; ls', ["hunter2Summer"]),
        ('echo "$DB_PASSWORD" 2>/dev/null; git status --short', ["hunter2Summer"]),
        ("op read op://v/i/p 2>&1; ls", ["hunter2Summer"]),
        ("cd app && printenv DB_PASSWORD 2>/dev/null && ls", ["hunter2Summer"]),
        ('printf \'%s\\n\' "$DB_PASSWORD" "$API_TOKEN"; ls', ["hunter2Summer", "Sunny-Day-42"]),
    ],
)
def test_the_blank_line_a_harness_put_before_the_output_is_no_value(
    command: str, values: list[str]
) -> None:
    """A harness that starts every output with a blank line (told by the session): the value
    after it is the printing command's, though it reads as written."""
    output = "\n" + "\n".join(values) + "\nMakefile\n"
    assert printed_values(command, output, GateConfig(), harness_blank_lines=1) == values
    # not known to be the harness's, the blank line may be the empty value, and the line
    # after it what `ls` printed: taken only when it reads as generated
    assert printed_values(command, output, GateConfig()) == []
    generated = output.replace("hunter2Summer", "Xk9mQ2vLp8rT4wZ")
    assert printed_values(command, generated, GateConfig())[:1] == ["Xk9mQ2vLp8rT4wZ"]


@pytest.mark.parametrize(
    ("command", "output"),
    [
        # past the harness's blank line, a blank one no echo printed is the empty value's
        ("op read op://v/i/p; ls", "\n\nsetup-Config2024.yaml\nMakefile\n"),
        # an echo's blank line, then the harness's: the line after is the value
        ("echo; op read op://v/i/p; ls", "\n\nhunter2Summer\nMakefile\n"),
        # the output starts with no blank line: nothing of it is the harness's
        ("op read op://v/i/p; ls", "hunter2Summer\nMakefile\n"),
    ],
)
def test_the_lines_after_the_harness_s_blank_line_are_paired_as_ever(
    command: str, output: str
) -> None:
    values = printed_values(command, output, GateConfig(), harness_blank_lines=1)
    assert values == (["hunter2Summer"] if "hunter2Summer" in output else [])


@pytest.mark.parametrize(
    "command",
    [
        "op read op://v/i/p > secret.txt",
        "op read op://v/i/p 2>/dev/null >secret.txt",
        "printenv DB_PASSWORD &>/dev/null",
        "printenv DB_PASSWORD 1>/dev/null",
    ],
)
def test_a_print_whose_output_goes_to_a_file_prints_no_value(command: str) -> None:
    assert printed_values(command, "Hq7L!mP2xW\n", GateConfig()) == []


@pytest.mark.parametrize(
    ("command", "value"),
    [
        ('op read op://prod/db/password || echo "$DB_PASS"', "hunter2Summer"),
        ("op read op://prod/db/password || echo $FALLBACK", "Correct-Horse-9"),
        ('op read op://v/i/p || echo "tok=$API_TOKEN"', "tok=hunter2Summer"),
        ('op read op://v/i/p; echo "$API_TOKEN" > /dev/stderr; true', "hunter2Summer"),
        ('pwd; op read op://v/i/p || echo "$API_TOKEN" >&2', "hunter2Summer"),
        ("ls; op read op://v/i/p; echo $API_TOKEN | tee t.txt; true", "hunter2Summer"),
    ],
)
def test_an_echo_after_a_read_that_failed_may_print_a_value(command: str, value: str) -> None:
    """A read whose error starts the output lends its lines to no value only when every other
    command surely prints none: an echo of a variable (one the pairing does not read as a
    credential's, `$DB_PASS`), or whose line goes elsewhere, may print one."""
    assert printed_values(command, f"{OP_ERROR}\n{value}\n", GateConfig()) == [value]
