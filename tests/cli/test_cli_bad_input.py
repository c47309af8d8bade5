"""Bad CLI input is one `error:` line naming what is wrong (exit 2), never an exception's name.

Breaks that turn this red: _missing_command removed from main() ("error: unknown error");
read_text_file's is_dir / UnicodeDecodeError branches removed (IsADirectoryError /
UnicodeDecodeError in the line); _check_env_file not called in load_settings (the line does not
name '.env'); _got's digit-count branch removed (the value is echoed cut to 20 digits).
"""

import pytest

from tests.support.cli_proc import digestbot, one_error


@pytest.mark.parametrize(
    ("args", "names"),
    [
        ((), "'digestbot' needs one of: channels"),
        (("papers",), "'digestbot papers' needs one of: list, show"),
        (("db",), "'digestbot db' needs one of: upgrade"),
        (("discord",), "'digestbot discord' needs one of: shards, sync"),
    ],
)
def test_a_bare_group_prints_help_then_names_the_missing_command(tmp_path, args, names):
    proc = digestbot(tmp_path, *args)
    line = one_error(proc)
    assert "missing command" in line and names in line and "unknown error" not in line
    assert "Usage" in proc.stdout  # the help is still shown


def test_a_huge_number_is_out_of_range_without_echoing_a_cut_value(tmp_path):
    line = one_error(digestbot(tmp_path, "papers", "list", "--limit", "9" * 23))
    assert "from 1 to 100000" in line and "23-digit number" in line and "9" * 20 not in line
    assert "Overflow" not in line


@pytest.mark.parametrize("command", [("search", "--queries-file"), ("import",)])
def test_a_directory_given_as_a_file_is_named(tmp_path, command):
    folder = tmp_path / "somedir"
    folder.mkdir()
    line = one_error(digestbot(tmp_path, *command, str(folder)))
    assert f"'{folder}' is a directory" in line and "Error" not in line


@pytest.mark.parametrize("command", [("search", "--queries-file"), ("import",)])
def test_a_file_that_is_not_utf8_is_named(tmp_path, command):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"graph \xff networks\n")
    line = one_error(digestbot(tmp_path, *command, str(bad)))
    assert f"cannot read '{bad}': not UTF-8 text" in line and "Decode" not in line


def test_a_dotenv_that_is_not_utf8_is_named(tmp_path):
    (tmp_path / ".env").write_bytes(b"DIGESTBOT_LOG_LEVEL=\xff\n")
    line = one_error(digestbot(tmp_path, "channels"))
    assert "cannot read '.env': not UTF-8 text" in line and "Decode" not in line


def test_an_over_long_query_is_refused_at_once(tmp_path):
    """A 101,000-character query ran for minutes without a word (an outside tester). Breaks
    that turn this red: PaperService.search without its length check (no error line: "No papers
    stored yet", or a search); _query_line without it (the file is refused at its first query,
    by the service, without naming line 2)."""
    line = one_error(digestbot(tmp_path, "search", "x" * 101_000, timeout=30))
    assert "too long (101,000 characters; the limit is 4,000)" in line
    queries = tmp_path / "q.txt"
    queries.write_text("graph neural networks\n" + "y " * 2100 + "\n", encoding="utf-8")
    line = one_error(digestbot(tmp_path, "search", "--queries-file", str(queries), timeout=30))
    assert f"{queries}:2: The query is too long (4,200 characters" in line
