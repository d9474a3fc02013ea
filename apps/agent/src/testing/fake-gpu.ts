/**
 * Stand-ins for the NVIDIA tools the GPU commands run (this machine has no GPU): an nvidia-smi
 * answering the two queries the agent makes (anything else exits 9, so a changed query fails the
 * test) and an nvidia-container-runtime that only exists.
 */
import { chmod, writeFile } from "node:fs/promises";
import path from "node:path";

/** The PATH of a Debian machine without the NVIDIA tools. */
export const SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin";

export interface FakeGpu {
  driverVersion: string;
  /** One `<name>, <memory> MiB` line per GPU. */
  gpus: { name: string; memoryMiB: number }[];
  cudaVersion: string;
}

/** An executable shell script at `file`. */
export async function writeExecutable(file: string, text: string): Promise<void> {
  await writeFile(file, text);
  await chmod(file, 0o755);
}

/** Writes `<directory>/nvidia-smi` describing `gpu`. */
export async function writeFakeNvidiaSmi(directory: string, gpu: FakeGpu): Promise<string> {
  const gpuLines = gpu.gpus
    .map(({ name, memoryMiB }) => `    echo "${gpu.driverVersion}, ${name}, ${memoryMiB} MiB"`)
    .join("\n");
  const file = path.join(directory, "nvidia-smi");
  await writeExecutable(
    file,
    `#!/bin/sh
case "$*" in
  "--query-gpu=driver_version,gpu_name,memory.total --format=csv,noheader")
${gpuLines} ;;
  "-q")
    echo "==============NVSMI LOG=============="
    echo "Driver Version                            : ${gpu.driverVersion}"
    echo "CUDA Version                              : ${gpu.cudaVersion}" ;;
  *) echo "unexpected arguments: $*" >&2; exit 9 ;;
esac
`,
  );
  return file;
}

/** Writes `<directory>/nvidia-container-runtime`, which the agent only looks up. */
export async function writeFakeNvidiaRuntime(directory: string): Promise<string> {
  const file = path.join(directory, "nvidia-container-runtime");
  await writeExecutable(file, "#!/bin/sh\nexit 0\n");
  return file;
}
