/**
 * Docker (issue 42, as Dokploy's Docker page): the engine of this machine or of a server the
 * organization owns, as the API shows it to the caller (its organization's containers, images
 * and volumes; the unmanaged ones for owners and admins): disk usage (dockerDiskUsage), the
 * containers (docker.getContainers) each with a link to its service's logs and a files browser
 * (docker.listContainerFiles, readContainerFile, deleteContainerFile: text files only, deletion
 * confirmed and only in a running container), the images (dockerImage) and the volumes
 * (dockerVolume: name, size, the service that uses it, removal confirmed) each with the same
 * files browser (listVolumeFiles, readVolumeFile, deleteVolumeFile).
 */
import { useId, useState } from "preact/hooks";
import { type Answer, mutate, query } from "./api.ts";
import { ConfirmButton, loadServices, type ServiceChoice } from "./confirm.tsx";
import { ServerPicker } from "./requests.tsx";
import { ErrorText, href, plural, useLoad } from "./ui.tsx";

type Container = Answer<"docker.getContainers">[number];
type FileEntry = Answer<"docker.listContainerFiles">[number];
type Volume = Answer<"dockerVolume.getVolumes">[number];

/** The server input every docker procedure takes: none for this machine. */
const on = (serverId: string) => (serverId ? { serverId } : {});

/**
 * The engine computes one disk usage at a time and refuses a second meanwhile: the page's two
 * readers of it (disk usage, the volumes' sizes) ask one after the other.
 */
let diskUsageTurn: Promise<unknown> = Promise.resolve();
function oneDiskUsageAtATime<T>(load: () => Promise<T>): Promise<T> {
  const next = diskUsageTurn.then(load, load);
  diskUsageTurn = next.catch(() => undefined);
  return next;
}

/** The service a container or volume belongs to, by the platform's names (appName-prefixed). */
function serviceOf(name: string, services: ServiceChoice[] | undefined): ServiceChoice | undefined {
  return services?.find(
    (service) =>
      name === service.appName ||
      [".", "-", "_"].some((separator) => name.startsWith(service.appName + separator)),
  );
}

/** The Logs tab of a service's page. */
function logsHref(service: ServiceChoice): string {
  if (service.type === "application") return href("application", service.id, "logs");
  if (service.type === "compose") return href("compose", service.id, "logs");
  return href("database", service.type, service.id, "logs");
}

/** Base64 text (the API's file answer) as UTF-8. */
function decodeText(base64: string): string {
  return new TextDecoder().decode(Uint8Array.from(atob(base64), (char) => char.charCodeAt(0)));
}

const joinPath = (directory: string, name: string) => `${directory.replace(/\/$/, "")}/${name}`;
const parentOf = (path: string) => path.replace(/\/[^/]+\/?$/, "") || "/";

function DiskUsage({ serverId }: { serverId: string }) {
  const usage = useLoad(
    () =>
      oneDiskUsageAtATime(() =>
        query<Answer<"dockerDiskUsage.getDiskUsage">>("dockerDiskUsage.getDiskUsage", on(serverId)),
      ),
    `docker-usage-${serverId}`,
  );
  return (
    <section class="card" aria-labelledby="docker-usage">
      <h2 id="docker-usage">Disk usage</h2>
      <ErrorText error={usage.error} />
      {usage.data && (
        <div class="table-scroll">
          <table class="list">
            <thead>
              <tr>
                <th scope="col">Kind</th>
                <th scope="col">Count</th>
                <th scope="col">In use</th>
                <th scope="col">Size</th>
                <th scope="col">Reclaimable</th>
              </tr>
            </thead>
            <tbody>
              {usage.data.map((item) => (
                <tr key={item.type}>
                  <td>{item.type}</td>
                  <td>{item.totalCount}</td>
                  <td>{item.active}</td>
                  <td>{item.size}</td>
                  <td>{item.reclaimable}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/**
 * Where a file browser reads: a container's or a volume's procedures and the input naming it.
 * Without remove, nothing is deletable (a container that is not running).
 */
type FileSource = {
  /** The container or volume, as the heading names it. */
  name: string;
  target: Record<string, string | undefined>;
  list: "docker.listContainerFiles" | "dockerVolume.listVolumeFiles";
  read: "docker.readContainerFile" | "dockerVolume.readVolumeFile";
  remove?: "docker.deleteContainerFile" | "dockerVolume.deleteVolumeFile";
  /** What deleting an entry loses, said after its path in the confirmation ("is deleted…"). */
  lost: string;
};

/** A read answer: a volume's says whether the file is text (a container refuses binary files). */
type FileText = Answer<"docker.readContainerFile"> & Partial<Answer<"dockerVolume.readVolumeFile">>;

/** A container's or volume's files: a directory listing, one text file open, deletion confirmed. */
function FileBrowser({ source, onClose }: { source: FileSource; onClose: () => void }) {
  const [directory, setDirectory] = useState("/");
  const [round, setRound] = useState(0);
  const [open, setOpen] = useState<{ path: string; text?: string; truncated?: boolean; error?: string }>();
  const { target } = source;
  const headingId = useId();
  const entries = useLoad(
    () => query<FileEntry[]>(source.list, { ...target, path: directory }),
    `files-${JSON.stringify(target)}-${directory}-${round}`,
  );
  const read = async (path: string) => {
    setOpen({ path });
    try {
      const file = await query<FileText>(source.read, { ...target, path });
      if (file.binary) setOpen({ path, error: "This file is not text: it is not shown." });
      else setOpen({ path, text: decodeText(file.content), truncated: file.truncated });
    } catch (failure) {
      setOpen({ path, error: failure instanceof Error ? failure.message : String(failure) });
    }
  };
  const sorted = [...(entries.data ?? [])].sort(
    (a, b) => Number(b.isDirectory) - Number(a.isDirectory) || a.name.localeCompare(b.name),
  );
  return (
    <section class="card" aria-labelledby={headingId}>
      <h2 id={headingId} class="wrap-anywhere">
        Files of {source.name}
      </h2>
      <div class="row">
        <p class="wrap-anywhere">
          Directory <code>{directory}</code>
        </p>
        <button
          type="button"
          class="ghost"
          disabled={directory === "/"}
          onClick={() => setDirectory(parentOf(directory))}
        >
          Up one directory
        </button>
        <button type="button" class="ghost" onClick={onClose}>
          Close the files
        </button>
      </div>
      <ErrorText error={entries.error} />
      {entries.data && sorted.length === 0 && <p class="muted">This directory is empty.</p>}
      <ul class="services" aria-label={`Entries of ${directory}`}>
        {sorted.map((entry) => {
          const path = joinPath(directory, entry.name);
          const remove = source.remove;
          return (
            <li key={entry.name} class="row">
              <button
                type="button"
                class="link wrap-anywhere"
                onClick={() => (entry.isDirectory ? setDirectory(path) : read(path))}
              >
                {entry.isDirectory ? `${entry.name}/` : entry.name}
              </button>
              {remove && (
                <ConfirmButton
                  label={`Delete ${entry.name}`}
                  lost={`${path}${entry.isDirectory ? " and everything in it" : ""} ${source.lost}`}
                  action={async () => {
                    await mutate(remove, { ...target, path });
                    if (open?.path === path) setOpen(undefined);
                    setRound((n) => n + 1);
                  }}
                />
              )}
            </li>
          );
        })}
      </ul>
      {open && (
        <section aria-labelledby={`${headingId}-open`} class="card">
          <h3 id={`${headingId}-open`} class="wrap-anywhere">
            {open.path}
          </h3>
          <ErrorText error={open.error} />
          {open.text === undefined && !open.error && <p role="status">Reading…</p>}
          {open.text !== undefined && (
            <>
              {open.truncated && <p class="muted">Only the beginning of the file is shown.</p>}
              <section
                class="log-lines"
                // biome-ignore lint/a11y/noNoninteractiveTabindex: the text scrolls; the keyboard must reach it
                tabIndex={0}
                aria-label={`Text of ${open.path}`}
              >
                {open.text}
              </section>
            </>
          )}
        </section>
      )}
    </section>
  );
}

function Containers({ serverId, services }: { serverId: string; services: ServiceChoice[] | undefined }) {
  const containers = useLoad(
    () => query<Container[]>("docker.getContainers", on(serverId)),
    `docker-containers-${serverId}`,
  );
  const [browsing, setBrowsing] = useState<Container>();
  return (
    <>
      <section class="card" aria-labelledby="docker-containers">
        <h2 id="docker-containers">Containers</h2>
        <div class="row">
          <button type="button" class="ghost" onClick={containers.reload}>
            Refresh
          </button>
        </div>
        <ErrorText error={containers.error} />
        {containers.data?.length === 0 && <p class="muted">No container on this server is yours to see.</p>}
        {containers.data && containers.data.length > 0 && (
          <div class="table-scroll">
            <table class="list">
              <caption>{plural(containers.data.length, "container")}</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Image</th>
                  <th scope="col">State</th>
                  <th scope="col">Ports</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {containers.data.map((container) => {
                  const service = serviceOf(container.name, services);
                  return (
                    <tr key={container.containerId}>
                      <td class="wrap-anywhere">{container.name}</td>
                      <td class="wrap-anywhere">{container.image}</td>
                      <td>
                        {container.state}
                        <div class="muted">{container.status}</div>
                      </td>
                      <td class="wrap-anywhere">{container.ports || "—"}</td>
                      <td>
                        <div class="row">
                          <button
                            type="button"
                            class="ghost"
                            aria-label={`Files of ${container.name}`}
                            onClick={() => setBrowsing(container)}
                          >
                            Files
                          </button>
                          {service && (
                            <a
                              href={logsHref(service)}
                              aria-label={`Logs of ${service.name} (${container.name})`}
                            >
                              Logs
                            </a>
                          )}
                        </div>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {browsing && (
        <FileBrowser
          key={browsing.containerId}
          source={{
            name: browsing.name,
            target: { containerId: browsing.containerId, ...on(serverId) },
            list: "docker.listContainerFiles",
            read: "docker.readContainerFile",
            remove: browsing.state === "running" ? "docker.deleteContainerFile" : undefined,
            lost: `is deleted from the container ${browsing.name}. A file of the image comes back when the container is recreated; anything else is gone.`,
          }}
          onClose={() => setBrowsing(undefined)}
        />
      )}
    </>
  );
}

function Images({ serverId }: { serverId: string }) {
  const images = useLoad(
    () => query<Answer<"dockerImage.getImages">>("dockerImage.getImages", on(serverId)),
    `docker-images-${serverId}`,
  );
  return (
    <section class="card" aria-labelledby="docker-images">
      <h2 id="docker-images">Images</h2>
      <ErrorText error={images.error} />
      {images.data?.length === 0 && <p class="muted">No image on this server is yours to see.</p>}
      {images.data && images.data.length > 0 && (
        <div class="table-scroll">
          <table class="list">
            <caption>{plural(images.data.length, "image")}</caption>
            <thead>
              <tr>
                <th scope="col">Repository</th>
                <th scope="col">Tag</th>
                <th scope="col">Size</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {images.data.map((image) => {
                const named = image.Repository !== "<none>" && image.Tag !== "<none>";
                const label = named ? `${image.Repository}:${image.Tag}` : image.ID;
                return (
                  <tr key={`${image.ID}-${image.Repository}-${image.Tag}`}>
                    <td class="wrap-anywhere">{image.Repository}</td>
                    <td class="wrap-anywhere">{image.Tag}</td>
                    <td>{image.Size}</td>
                    <td>{image.CreatedSince}</td>
                    <td>
                      <ConfirmButton
                        label={`Remove ${label}`}
                        lost={`The image ${label} is removed from this server's engine; a deployment that needs it pulls or builds it again. An image a container uses is refused.`}
                        action={async () => {
                          await mutate(
                            "dockerImage.removeImage",
                            named
                              ? { repository: image.Repository, tag: image.Tag, ...on(serverId) }
                              : { id: image.ID, ...on(serverId) },
                          );
                          images.reload();
                        }}
                      />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** The service a volume belongs to: its platform.resource label, else its name's appName prefix. */
function volumeUser(volume: Volume, services: ServiceChoice[] | undefined): ServiceChoice | undefined {
  const resource = /(?:^|,)platform\.resource=([^,]+)/.exec(volume.Labels)?.[1];
  const id = resource?.split(":")[1];
  const labelled = id ? services?.find((service) => service.id === id) : undefined;
  const project = /(?:^|,)com\.docker\.(?:compose\.project|stack\.namespace)=([^,]+)/.exec(
    volume.Labels,
  )?.[1];
  return labelled ?? serviceOf(project ?? volume.Name, services);
}

function Volumes({ serverId, services }: { serverId: string; services: ServiceChoice[] | undefined }) {
  const volumes = useLoad(
    () =>
      Promise.all([
        query<Volume[]>("dockerVolume.getVolumes", on(serverId)),
        oneDiskUsageAtATime(() =>
          query<Answer<"dockerVolume.getVolumesSize">>("dockerVolume.getVolumesSize", on(serverId)),
        ).catch(() => [] as Answer<"dockerVolume.getVolumesSize">),
      ]),
    `docker-volumes-${serverId}`,
  );
  const [list, sizes] = volumes.data ?? [undefined, []];
  const [browsing, setBrowsing] = useState<Volume>();
  return (
    <>
      <section class="card" aria-labelledby="docker-volumes">
        <h2 id="docker-volumes">Volumes</h2>
        <ErrorText error={volumes.error} />
        {list?.length === 0 && <p class="muted">No volume on this server is yours to see.</p>}
        {list && list.length > 0 && (
          <div class="table-scroll">
            <table class="list">
              <caption>{plural(list.length, "volume")}</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Size</th>
                  <th scope="col">Used by</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.map((volume) => {
                  const user = volumeUser(volume, services);
                  return (
                    <tr key={volume.Name}>
                      <td class="wrap-anywhere">{volume.Name}</td>
                      <td>{sizes.find((size) => size.name === volume.Name)?.size ?? "—"}</td>
                      <td class="wrap-anywhere">{user ? `${user.name} (${user.where})` : "—"}</td>
                      <td>
                        <div class="row">
                          <button
                            type="button"
                            class="ghost"
                            aria-label={`Files of ${volume.Name}`}
                            onClick={() => setBrowsing(volume)}
                          >
                            Files
                          </button>
                          <ConfirmButton
                            label={`Remove ${volume.Name}`}
                            lost={`The volume ${volume.Name} and every file in it are deleted. A volume a container uses is refused.`}
                            action={async () => {
                              await mutate("dockerVolume.removeVolume", {
                                volumeName: volume.Name,
                                ...on(serverId),
                              });
                              if (browsing?.Name === volume.Name) setBrowsing(undefined);
                              volumes.reload();
                            }}
                          />
                        </div>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {browsing && (
        <FileBrowser
          key={browsing.Name}
          source={{
            name: browsing.Name,
            target: { volumeName: browsing.Name, ...on(serverId) },
            list: "dockerVolume.listVolumeFiles",
            read: "dockerVolume.readVolumeFile",
            remove: "dockerVolume.deleteVolumeFile",
            lost: `is deleted from the volume ${browsing.Name}, for every container that mounts it; it is gone.`,
          }}
          onClose={() => setBrowsing(undefined)}
        />
      )}
    </>
  );
}

export function DockerPage() {
  const [serverId, setServerId] = useState("");
  const services = useLoad(() => loadServices().catch(() => [] as ServiceChoice[]), "docker-services");
  return (
    <div class="instance-page">
      <h1>Docker</h1>
      <p class="muted">
        The containers, images and volumes of a server's Docker Engine that are yours to see.
      </p>
      <div class="card">
        <ServerPicker id="docker-server" value={serverId} onChange={setServerId} />
      </div>
      <DiskUsage key={`usage-${serverId}`} serverId={serverId} />
      <Containers key={`containers-${serverId}`} serverId={serverId} services={services.data} />
      <Images key={`images-${serverId}`} serverId={serverId} />
      <Volumes key={`volumes-${serverId}`} serverId={serverId} services={services.data} />
    </div>
  );
}
