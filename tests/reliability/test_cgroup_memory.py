"""The memory a container or a systemd slice allows is the memory available: a run that
``/proc/meminfo`` says fits but the process's memory cgroup does not is refused with the
advice, not killed by the kernel without a word. Checked on written cgroup trees (v2, v1,
both, a container's view) and, where this process may make one, in a real v1 group."""
import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nbsvm import memory
from testhelpers import run_cli

MB = 1 << 20


def group(folder: Path, limit, usage: int, cache: int = 0, version: int = 2, shared: int = 0,
          dirty: int = 0) -> Path:
    """A cgroup folder as the kernel shows it: its limit ("max" or bytes), usage, and the
    page cache (with its shared memory and dirty pages)."""
    folder.mkdir(parents=True, exist_ok=True)
    limit_file, usage_file, (file_key, shared_key, dirty_key) = (
        memory.V2_FILES if version == 2 else memory.V1_FILES)
    (folder / limit_file).write_text(f"{limit}\n")
    (folder / usage_file).write_text(f"{usage}\n")
    (folder / "memory.stat").write_text(
        f"anon {usage - cache}\n{file_key} {cache}\n{shared_key} {shared}\n{dirty_key} {dirty}\n"
        f"inactive_file {cache // 3}\nactive 7\n")
    return folder


def test_v2_the_limit_less_what_the_group_holds_beyond_its_droppable_cache(tmp_path):
    root = tmp_path / "cgroup"
    group(root / "user.slice" / "job.scope", 1000 * MB, 700 * MB, cache=100 * MB)
    (root / "cgroup.controllers").write_text("cpu memory\n")
    proc = tmp_path / "proc_cgroup"
    proc.write_text("0::/user.slice/job.scope\n")
    assert memory.cgroup_headroom(root, proc) == 400 * MB          # 1000 - (700 - 100)
    # an ancestor's tighter limit rules; "max" is no limit
    group(root / "user.slice", 900 * MB, 800 * MB)
    assert memory.cgroup_headroom(root, proc) == 100 * MB
    group(root / "user.slice", "max", 800 * MB)
    group(root / "user.slice" / "job.scope", "max", 700 * MB)
    assert memory.cgroup_headroom(root, proc) is None
    # a group over its limit leaves nothing, never a negative figure
    group(root / "user.slice" / "job.scope", 500 * MB, 700 * MB)
    assert memory.cgroup_headroom(root, proc) == 0


def test_the_cache_the_kernel_can_drop_is_room(tmp_path):
    """A corpus just read sits in the group's page cache, active and inactive: the kernel
    drops it before it kills, so it is room; shared memory (tmpfs) and dirty pages are not
    (counting the inactive part only refused runs the group holds)."""
    root = tmp_path / "cgroup"
    (root / "cgroup.controllers").parent.mkdir(parents=True)
    (root / "cgroup.controllers").write_text("memory\n")
    proc = tmp_path / "proc_cgroup"
    proc.write_text("0::/\n")
    group(root, 2000 * MB, 1800 * MB, cache=1500 * MB)
    assert memory.cgroup_headroom(root, proc) == 1700 * MB      # 2000 - (1800 - 1500)
    group(root, 2000 * MB, 1800 * MB, cache=1500 * MB, shared=400 * MB, dirty=100 * MB)
    assert memory.cgroup_headroom(root, proc) == 1200 * MB      # 1500 - 400 - 100 dropped
    group(root, 2000 * MB, 1800 * MB, cache=1500 * MB, version=1)
    (root / "memory").mkdir()
    for name in ("memory.limit_in_bytes", "memory.usage_in_bytes", "memory.stat"):
        (root / "memory" / name).write_text((root / name).read_text())
    proc.write_text("4:memory:/\n")
    assert memory.cgroup_headroom(root, proc) == 1700 * MB


def test_v1_hybrid_and_a_containers_view(tmp_path):
    root = tmp_path / "cgroup"
    proc = tmp_path / "proc_cgroup"
    # v1 memory beside a v2 "unified" mount without the memory controller (this machine's
    # shape); the kernel's "no limit" is 2**63 - 1 rounded to a page
    group(root / "memory" / "docker" / "abc", 2048 * MB, 1024 * MB, cache=24 * MB, version=1)
    group(root / "memory", 9223372036854771712, 5000 * MB, version=1)
    (root / "unified").mkdir(parents=True)
    proc.write_text("12:pids:/docker/abc\n4:memory:/docker/abc\n0::/docker/abc\n")
    assert memory.cgroup_headroom(root, proc) == 1048 * MB
    # inside a container the mount's root is the container's own group, named by the
    # host's path that the mount does not hold
    root2 = tmp_path / "container"
    group(root2 / "memory", 512 * MB, 112 * MB, version=1)
    proc.write_text("4:cpu,memory:/docker/abc\n")
    assert memory.cgroup_headroom(root2, proc) == 400 * MB
    # nothing to read: no figure; nor where a group's path cannot be looked at (a name
    # too long: is_dir raised ENAMETOOLONG through every memory check)
    assert memory.cgroup_headroom(tmp_path / "none", tmp_path / "missing") is None
    proc.write_text(f"4:memory:/{'x' * 300}/abc\n")
    assert memory.cgroup_headroom(root, proc) is None


def test_available_is_the_least_of_the_machine_and_the_group(tmp_path, monkeypatch):
    root = tmp_path / "cgroup"
    group(root, 300 * MB, 100 * MB)
    (root / "cgroup.controllers").write_text("memory\n")
    (tmp_path / "proc").write_text("0::/\n")
    monkeypatch.setattr(memory, "CGROUP_ROOT", root)
    monkeypatch.setattr(memory, "PROC_CGROUP", tmp_path / "proc")
    assert memory.available_bytes() == min(200 * MB, memory._meminfo_available())
    # the CLI refuses, saying what to change, before it allocates the hashing pass
    train = tmp_path / "train.txt"
    train.write_text("pos\tgood film\nneg\tbad film\n")
    r = run_cli("train", train, "-o", tmp_path / "m.npz", "--n-bits", "24", "-q")
    assert r.returncode == 2, r.stderr
    assert "but only 200.0 MB is available: lower --n-bits" in r.stderr
    assert not (tmp_path / "m.npz").exists()


def writable_v1_group() -> Path | None:
    """This process's v1 memory group, where a child group can be made (root, no namespace
    hiding it); None elsewhere."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            folder = Path("/sys/fs/cgroup/memory") / path.strip("/")
            if folder.is_dir() and os.access(folder, os.W_OK):
                return folder
    return None


@contextlib.contextmanager
def memory_group(limit: int, name: str):
    """A new v1 memory group of ``limit`` bytes under this process's own (the test is
    skipped where none can be made), removed afterwards."""
    parent = writable_v1_group()
    if parent is None:
        pytest.skip("no writable cgroup v1 memory group here")
    child = parent / f"nbsvm-{name}-{os.getpid()}"
    try:
        child.mkdir()
        (child / "memory.limit_in_bytes").write_text(str(limit))
    except OSError as err:
        pytest.skip(f"cannot make a memory group: {err}")
    try:
        yield child
    finally:
        child.rmdir()


def test_a_real_memory_group_refuses_what_the_machine_would_hold(tmp_path):
    with memory_group(600 * MB, "test") as child:
        train = tmp_path / "train.txt"
        train.write_text("pos\tgood film\nneg\tbad film\n" * 50)
        # the hashing pass at 28 bits takes 2.3 GB: the machine may hold it, the group not
        procs = str(child / "cgroup.procs")

        def enter() -> None:
            with open(procs, "w") as fh:
                fh.write(str(os.getpid()))

        r = subprocess.run(
            [sys.executable, "-m", "nbsvm", "train", str(train), "-o", str(tmp_path / "m.npz"),
             "--n-bits", "28", "-q"],
            capture_output=True, text=True, preexec_fn=enter, timeout=120,
        )
        assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
        assert "the hashing pass needs about 2.2 GB but only" in r.stderr
        assert "is available: lower --n-bits" in r.stderr and "Traceback" not in r.stderr


def test_a_line_too_long_to_hash_is_refused_before_it_is_read_whole(tmp_path, monkeypatch):
    """A line is read up to the longest document the memory available could hash (20
    bytes a byte): a longer one is refused naming its line, in every line format, before
    it is held; one within reads as before."""
    monkeypatch.setattr(memory, "available_bytes", lambda: 40 * MB)     # lines up to 2 MB
    text = tmp_path / "text.txt"
    text.write_text("pos\tgood film\nneg\t" + "bad " * (MB // 2) + "\npos\tfine\n")   # 2 MB
    r = run_cli("train", text, "-o", tmp_path / "m.npz", "--n-bits", "12", "-q")
    assert r.returncode == 2 and "m.npz" not in r.stdout
    assert f"{text}:2: a line of more than 2.0 MB, a twentieth of the memory available " \
        "(hashing a document takes about 20 times its bytes): split it into documents or " \
        "rows" in r.stderr
    # svmlight rows: a lone CR ends a row there, and the row is named as its parser names it
    svm = tmp_path / "rows.svm"
    svm.write_bytes(b"1 1:1\r-1 2:1\n-1 " + " ".join(f"{i}:1" for i in range(2, 300_000)).encode()
                    + b"\n")
    r = run_cli("learn", svm, "-o", tmp_path / "l.npz", "--n-bits", "20")
    assert r.returncode == 2 and f"{svm}:3: a line of more than 2.0 MB" in r.stderr, r.stderr
    # the same cap, with the memory to train: a line under it reads as before
    from nbsvm.io import decoding

    monkeypatch.undo()
    monkeypatch.setattr(decoding, "longest_line", lambda: 2 * MB)
    text.write_text("pos\tgood film\nneg\t" + "bad " * (MB // 3) + "\npos\tfine\n")   # 1.3 MB
    r = run_cli("train", text, "-o", tmp_path / "m.npz", "--n-bits", "12", "--min-df", "1", "-q")
    assert r.returncode == 0, r.stderr


_PEAK = ("import os, subprocess, sys\n"
         "open(sys.argv[1], 'w').write(str(os.getpid()))\n"   # this helper joins the group
         "p = subprocess.Popen(sys.argv[3:], stdout=subprocess.DEVNULL, "
         "stderr=open(sys.argv[2], 'w'))\n"
         "_, status, usage = os.wait4(p.pid, 0)\n"
         "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024)\n")


@pytest.mark.slow  # over 1.5 s (make test-slow; CI runs it after make test)
def test_in_a_real_group_a_long_line_is_refused_after_reading_a_part(tmp_path):
    """In a 1.5 GB group a 192 MB line took 745 MB to read, decode and strip before the
    document check refused it (hashing it needs 3.8 GB); it is refused having read 74 MB
    (peak 193 MB)."""
    with memory_group(1500 * MB, "line") as child:
        data = tmp_path / "long.txt"
        with open(data, "w") as fh:
            fh.write("pos\tgood film\nneg\t")
            for _ in range(48):
                fh.write("bad " * MB)
            fh.write("\npos\tfine\n")
        err = tmp_path / "stderr.txt"
        out = subprocess.run(
            [sys.executable, "-c", _PEAK, str(child / "cgroup.procs"), str(err), sys.executable,
             "-m", "nbsvm", "train", str(data), "-o", str(tmp_path / "m.npz"), "-q"],
            capture_output=True, text=True, check=True, timeout=300)
        code, peak = map(int, out.stdout.split())
        assert code == 2 and f"{data}:2: a line of more than " in err.read_text(), err.read_text()
        assert peak < 400 * MB, peak >> 20
