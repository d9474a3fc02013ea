/**
 * One system sample (spec 2.13 system record) read with systeminformation: CPU load since the
 * previous sample, memory, the root filesystem, network bytes since the previous sample and the
 * host's static facts (CPU model, cores, OS, kernel), which are read once.
 */
import type { SystemMetricsRecord } from "@platform/agent-protocol";

/** systeminformation (a large module) loads with the first sample: monitoring is opt-in. */
const loadSystemInformation = async () => (await import("systeminformation")).default;

const GB = 1024 ** 3;
const MB = 1024 ** 2;
const fixed2 = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : "0.00");

/** The facts of the record that do not change while the agent runs. */
type StaticFacts = Pick<
  SystemMetricsRecord,
  "cpuModel" | "cpuCores" | "cpuPhysicalCores" | "cpuSpeed" | "os" | "distro" | "kernel" | "arch"
>;

export class SystemSampler {
  private facts?: StaticFacts;
  private previousNetwork?: { rx: number; tx: number };

  async sample(now = new Date()): Promise<SystemMetricsRecord> {
    const si = await loadSystemInformation();
    this.facts ??= await readStaticFacts(si);
    const [load, memory, disks, network] = await Promise.all([
      si.currentLoad(),
      si.mem(),
      si.fsSize(),
      si.networkStats("*"),
    ]);
    const root = disks.find((disk) => disk.mount === "/") ?? disks[0];
    const rx = network.reduce((sum, nic) => sum + (nic.rx_bytes || 0), 0);
    const tx = network.reduce((sum, nic) => sum + (nic.tx_bytes || 0), 0);
    const previous = this.previousNetwork ?? { rx, tx };
    this.previousNetwork = { rx, tx };
    const used = memory.active; // without buffers and page cache, as `free` shows "used"
    return {
      ...this.facts,
      cpu: fixed2(load.currentLoad),
      memUsed: fixed2((used / memory.total) * 100),
      memUsedGB: fixed2(used / GB),
      memTotal: fixed2(memory.total / GB),
      uptime: Math.floor(si.time().uptime),
      diskUsed: fixed2(root ? root.use : 0),
      totalDisk: fixed2(root ? root.size / GB : 0),
      networkIn: fixed2(Math.max(0, rx - previous.rx) / MB),
      networkOut: fixed2(Math.max(0, tx - previous.tx) / MB),
      timestamp: now.toISOString(),
    };
  }
}

async function readStaticFacts(si: Awaited<ReturnType<typeof loadSystemInformation>>): Promise<StaticFacts> {
  const [cpu, os] = await Promise.all([si.cpu(), si.osInfo()]);
  return {
    cpuModel: `${cpu.manufacturer} ${cpu.brand}`.trim(),
    cpuCores: cpu.cores,
    cpuPhysicalCores: cpu.physicalCores,
    cpuSpeed: cpu.speed,
    os: os.platform,
    distro: `${os.distro} ${os.release}`.trim(),
    kernel: os.kernel,
    arch: os.arch,
  };
}
