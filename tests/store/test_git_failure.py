"""The one line ynm shows of a failed git child (ynm.store.repo.git_failure_line), for the
shapes git's stderr takes, each captured from a real git run."""

from __future__ import annotations

import subprocess

import pytest

from ynm.store.repo import git_failure_line
from ynm.store.sync import lost_race, push_failure


def failed(stderr: str, stdout: str = "", code: int = 128) -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(["git"], code, stdout, stderr)


@pytest.mark.parametrize(("stderr", "line"), [
    (("fatal: '/x' does not appear to be a git repository\nfatal: Could not read from remote "
     "repository.\n\nPlease make sure you have the correct access rights\nand the repository "
     "exists.\n"), "fatal: '/x' does not appear to be a git repository"),
    (("ssh: connect to host h port 22: Connection refused\r\nfatal: Could not read from remote "
     "repository.\n\nPlease make sure you have the correct access rights\n"),
     ("ssh: connect to host h port 22: Connection refused; fatal: Could not read from remote "
     "repository.")),
    ("remote: policy: notes are frozen        \nerror: failed to push some refs to 'o.git'\n",
     "remote: policy: notes are frozen; error: failed to push some refs to 'o.git'"),
    ("warning: one\nwarning: two\nwarning: three\nerror: it broke\n",
     "warning: two; warning: three; error: it broke"),
    ("something odd\nand more\n", "something odd"),
    ("", "exit 128"),
])
def test_one_line_of_what_git_said(stderr, line):
    assert git_failure_line(failed(stderr)) == line


def test_a_refused_push_is_no_race_and_leads_with_the_refusal():
    refused = failed("remote: notes are frozen\nerror: failed to push some refs to 'o.git'\n",
                     "To o.git\n!\tHEAD:refs/heads/main\t[remote rejected] (pre-receive hook "
                     "declined)\nDone\n", 1)
    assert not lost_race(refused)
    assert push_failure(refused) == ("the remote refused it (pre-receive hook declined): "
                                     "remote: notes are frozen; error: failed to push some "
                                     "refs to 'o.git'")
    moved = failed("error: failed to push some refs to 'o.git'\nhint: Updates were rejected\n",
                   "To o.git\n!\trefs/notes/x:refs/notes/x\t[rejected] (fetch first)\nDone\n", 1)
    assert lost_race(moved)
