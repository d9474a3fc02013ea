/**
 * Certificates: the organization's own TLS certificates (certificates.all), each with the hosts
 * it covers and its expiry; a new one from its PEM chain and private key (the key is write-only:
 * sealed by the API and never answered), and delete with a confirmation.
 */
import { useState } from "preact/hooks";
import { type Answer, mutate, query } from "./api.ts";
import { ConfirmButton, when } from "./confirm.tsx";
import { ErrorText, useLoad, useSubmit } from "./ui.tsx";

type Certificate = Answer<"certificates.all">[number];
type Server = { serverId: string; name: string };

function NewCertificate({ onCreated }: { onCreated: () => void }) {
  const servers = useLoad(
    () => query<Server[]>("server.all").catch(() => [] as Server[]),
    "certificate-servers",
  );
  const [name, setName] = useState("");
  const [certificateData, setCertificateData] = useState("");
  const [privateKey, setPrivateKey] = useState("");
  const [serverId, setServerId] = useState("");
  const create = useSubmit(async () => {
    await mutate("certificates.create", {
      name,
      certificateData,
      privateKey,
      ...(serverId ? { serverId } : {}),
    });
    setName("");
    setCertificateData("");
    setPrivateKey("");
    onCreated();
  });
  return (
    <form onSubmit={create.onSubmit} class="card inline" aria-labelledby="new-certificate">
      <h2 id="new-certificate">New certificate</h2>
      <label>
        Certificate name
        <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Certificate chain (PEM, the leaf first)
        <textarea
          class="pem"
          required
          rows={6}
          spellcheck={false}
          placeholder="-----BEGIN CERTIFICATE-----"
          value={certificateData}
          onInput={(e) => setCertificateData(e.currentTarget.value)}
        />
      </label>
      <label>
        Private key (PEM; stored encrypted, never shown again)
        <textarea
          class="pem"
          required
          rows={4}
          spellcheck={false}
          autocomplete="off"
          placeholder="-----BEGIN PRIVATE KEY-----"
          value={privateKey}
          onInput={(e) => setPrivateKey(e.currentTarget.value)}
        />
      </label>
      {(servers.data?.length ?? 0) > 0 && (
        <label>
          Server whose proxy serves it
          <select value={serverId} onChange={(e) => setServerId(e.currentTarget.value)}>
            <option value="">This machine</option>
            {servers.data?.map((server) => (
              <option key={server.serverId} value={server.serverId}>
                {server.name}
              </option>
            ))}
          </select>
        </label>
      )}
      <button type="submit" disabled={create.busy}>
        Add certificate
      </button>
      <ErrorText error={create.error} />
    </form>
  );
}

export function CertificatesPage() {
  const certificates = useLoad(() => query<Certificate[]>("certificates.all"), "certificates");
  return (
    <div class="instance-page">
      <h1>Certificates</h1>
      <p class="muted">
        Your own TLS certificates: a domain whose certificate type is custom is served with the one that
        covers its host.
      </p>
      <ErrorText error={certificates.error} />
      {certificates.data?.length === 0 && (
        <p class="muted">No certificate yet: paste a PEM chain and its private key below.</p>
      )}
      <ul class="services" aria-label="Certificates">
        {certificates.data?.map((certificate) => {
          const expired = new Date(certificate.expiresAt).getTime() < Date.now();
          return (
            <li key={certificate.certificateId}>
              <strong>{certificate.name}</strong>{" "}
              <span class={expired ? "badge status-error" : "badge"}>
                {expired ? "expired" : "expires"} {when(certificate.expiresAt)}
              </span>
              <p class="muted wrap-anywhere">Hosts: {certificate.hosts.join(", ") || "none named"}</p>
              <ConfirmButton
                label={`Delete certificate ${certificate.name}`}
                lost={`The certificate and its private key are deleted and taken off the proxy: ${certificate.hosts.join(", ") || "its hosts"} fall back to another certificate.`}
                action={async () => {
                  await mutate("certificates.remove", { certificateId: certificate.certificateId });
                  certificates.reload();
                }}
              />
            </li>
          );
        })}
      </ul>
      <NewCertificate onCreated={certificates.reload} />
    </div>
  );
}
