"""Engine cache measurement (bench/RESULTS.md, "Engine cache"): `splice run` of MODEL.pt2
cold (empty cache), warm (a hit), --no-cache, and of MODEL.splice; wall time (perf_counter
around the child) and peak RSS (the child's ru_maxrss from wait4, what /usr/bin/time -v
reports), median over interleaved repetitions.
usage: bench.py SPLICE DIR NAME REPS"""
import os, shutil, statistics, subprocess, sys, time

splice, d, name, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
os.chdir(d)
io = ["--inputs", f"{name}.inputs.safetensors", "--outputs", f"out.{name}.safetensors",
      "--threads", "1"]
subprocess.run([splice, "compile", f"{name}.pt2", "-o", f"{name}.splice"], check=True)
cache = f"cache.{name}"


def one(args):
    t = time.perf_counter()
    p = subprocess.Popen([splice] + args, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    assert status == 0, args
    return wall, ru.ru_maxrss / 1024, ru.ru_utime + ru.ru_stime  # s, MiB, CPU s


runs = {"cold": [], "warm": [], "no-cache": [], "engine": []}
for _ in range(reps):
    shutil.rmtree(cache, ignore_errors=True)
    runs["cold"].append(one(["run", f"{name}.pt2", *io, "--cache-dir", cache]))
    runs["warm"].append(one(["run", f"{name}.pt2", *io, "--cache-dir", cache]))
    runs["no-cache"].append(one(["run", f"{name}.pt2", *io, "--no-cache"]))
    runs["engine"].append(one(["run", f"{name}.splice", *io]))
    runs["warm"].append(one(["run", f"{name}.pt2", *io, "--cache-dir", cache]))
    runs["engine"].append(one(["run", f"{name}.splice", *io]))
med = lambda v, i: statistics.median(x[i] for x in v)
eng_w, eng_c = med(runs["engine"], 0), med(runs["engine"], 2)
for k, v in runs.items():
    w, c = med(v, 0), med(v, 2)
    print(f"| {name} | {k} | {len(v)} | {w*1000:.0f} | {min(x[0] for x in v)*1000:.0f} | "
          f"{w/eng_w:.2f}x | {c*1000:.0f} | {c/eng_c:.2f}x | {med(v, 1):.1f} |")
