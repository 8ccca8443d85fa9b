/**
 * CPU time and memory of a process tree, read from `/proc` (Linux). CPU is `utime + stime` of
 * every live process of the tree plus `cutime + cstime` (children already reaped), in clock ticks
 * (`getconf CLK_TCK`, usually 100 per second: windows of a few seconds keep the rounding small).
 * @module
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** Clock ticks per second of the `/proc/<pid>/stat` times. */
export const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Whether `/proc` can be read (Linux): without it there are no CPU or memory figures. */
export const HAVE_PROC = (() => {
  try {
    readFileSync('/proc/self/stat', 'utf8');
    return true;
  } catch {
    return false;
  }
})();

/** Whether `taskset` exists, to pin the servers and the load generator to different cores. */
export const HAVE_TASKSET = (() => {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * The fields after the command name of `/proc/<pid>/stat` (the name may contain spaces and
 * parentheses, so split after the last `)`): index 0 is `state`, 1 `ppid`, 11 `utime`, 12 `stime`,
 * 13 `cutime`, 14 `cstime`.
 * @param {number} pid
 * @returns {string[] | undefined}
 */
function statFields(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * The pid and all its live descendants.
 * @param {number} root
 * @returns {number[]}
 */
export function processTree(root) {
  /** @type {Map<number, number[]>} */
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const ppid = Number(statFields(Number(name))?.[1]);
    if (!Number.isFinite(ppid)) continue;
    const list = children.get(ppid) ?? [];
    list.push(Number(name));
    children.set(ppid, list);
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(/** @type {number} */ (out[i])) ?? []));
  return out;
}

/**
 * CPU time of one process (its own threads and its reaped children), in seconds.
 * @param {number} pid
 * @returns {number} 0 when the process is gone
 */
export function processCpuSeconds(pid) {
  const f = statFields(pid);
  if (f === undefined) return 0;
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLOCK_TICKS;
}

/**
 * CPU time of a process tree, in seconds.
 * @param {number} root
 */
export function treeCpuSeconds(root) {
  let total = 0;
  for (const pid of processTree(root)) total += processCpuSeconds(pid);
  return total;
}

/**
 * A `kB` line of `/proc/<pid>/status`, in bytes.
 * @param {number} pid
 * @param {'VmRSS' | 'VmHWM'} field
 */
function statusBytes(pid, field) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match === null ? 0 : Number(match[1]) * 1024;
  } catch {
    return 0;
  }
}

/**
 * Resident memory of a process tree: the current sum of `VmRSS`, and the sum of each process's
 * peak (`VmHWM`).
 * @param {number} root
 * @returns {{ rss: number, hwm: number }} bytes
 */
export function treeMemory(root) {
  let rss = 0;
  let hwm = 0;
  for (const pid of processTree(root)) {
    rss += statusBytes(pid, 'VmRSS');
    hwm += statusBytes(pid, 'VmHWM');
  }
  return { rss, hwm };
}

/**
 * Resets the peak resident memory (`VmHWM`) of every process of a tree to its current resident
 * memory (Linux: `5` written to `/proc/<pid>/clear_refs`), so that a later peak is the peak since
 * now. Best effort: a process the caller may not write to keeps its peak since start.
 * @param {number} root
 */
export function resetPeakMemory(root) {
  for (const pid of processTree(root)) {
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
    } catch {
      // not ours, or gone
    }
  }
}
