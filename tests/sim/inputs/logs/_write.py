"""Small logs written from each format's published schema, for the reader tests.

Each helper writes text exactly as the format's documentation shows it (column names, time
formats, state names) and returns the path; none of the real logs is committed.
"""

from __future__ import annotations

import json
from pathlib import Path

HELIOS_HEADER = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue"
SLURM_HEADER = "JobID|JobName|User|Account|Partition|State|Submit|Start|End|Elapsed|NNodes|AllocTRES|ReqTRES"


def helios(folder: Path, rows, name="cluster_log.csv", header=HELIOS_HEADER) -> Path:
    """rows: tuples (job_id, user, vc, gpu_num, node_num, state, submit, start, end)."""
    lines = [header]
    for job_id, user, vc, gpus, nodes, state, submit, start, end in rows:
        lines.append(f"{job_id},{user},{vc},{gpus},4,{nodes},{state},{submit},{start},{end},0,0")
    p = Path(folder) / name
    p.write_text("\n".join(lines) + "\n")
    return p


def slurm(folder: Path, rows, name="sacct.txt") -> Path:
    """rows: tuples (JobID, User, Partition, State, Submit, Start, End, NNodes, AllocTRES, ReqTRES)."""
    lines = [SLURM_HEADER]
    for jobid, user, part, state, submit, start, end, nnodes, alloc, req in rows:
        lines.append(
            f"{jobid}|job{jobid}|{user}|acct|{part}|{state}|{submit}|{start}|{end}|00:00:00|{nnodes}|{alloc}|{req}"
        )
    p = Path(folder) / name
    p.write_text("\n".join(lines) + "\n")
    return p


def philly_job(jobid, status, submitted, attempts, vc="vc1", user="u1"):
    """One cluster_job_log entry; attempts: (start, end, [(ip, ngpus), ...])."""
    return {
        "status": status,
        "vc": vc,
        "jobid": jobid,
        "attempts": [
            {
                "start_time": s,
                "end_time": e,
                "detail": [{"ip": ip, "gpus": [f"gpu{k}" for k in range(g)]} for ip, g in d],
            }
            for s, e, d in attempts
        ],
        "submitted_time": submitted,
        "user": user,
    }


def philly(folder: Path, jobs, name="cluster_job_log", indent=4) -> Path:
    p = Path(folder) / name
    p.write_text(json.dumps(jobs, indent=indent))
    return p


def pai(folder: Path, jobs, tasks, header=False) -> Path:
    """jobs: (job_name, inst_id, user, status, start_time, end_time); tasks: (job_name, task_name,
    inst_num, status, start_time, end_time, plan_cpu, plan_mem, plan_gpu, gpu_type). No header
    row, as published (``header=True`` adds one)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    jh = "job_name,inst_id,user,status,start_time,end_time\n" if header else ""
    th = (
        "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type\n" if header else ""
    )
    (folder / "pai_job_table.csv").write_text(jh + "".join(",".join(map(str, r)) + "\n" for r in jobs))
    (folder / "pai_task_table.csv").write_text(th + "".join(",".join(map(str, r)) + "\n" for r in tasks))
    return folder
