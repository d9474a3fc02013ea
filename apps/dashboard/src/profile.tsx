/**
 * The signed-in user's profile: name and email (user.update; a new email needs the current
 * password and waits for its confirmation), the password (current and new), and two-factor
 * sign-in: enrol (auth.twoFactorEnable answers the secret and its otpauth:// URI, shown as text;
 * auth.twoFactorConfirm turns it on with the authenticator's first code), the recovery codes
 * shown once, new recovery codes, and turning it off; each of those asks for the password again,
 * as the API does.
 */
import { useState } from "preact/hooks";
import { type Answer, mutate, query } from "./api.ts";
import { ConfirmButton, ErrorText, useLoad, useSubmit } from "./ui.tsx";

type Profile = Answer<"user.get">;

function NameAndEmail({ profile, onSaved }: { profile: Profile; onSaved: () => void }) {
  const [name, setName] = useState(profile.name ?? "");
  const [email, setEmail] = useState(profile.email);
  const [currentPassword, setCurrentPassword] = useState("");
  const [message, setMessage] = useState("");
  const newEmail = email.trim().toLowerCase() !== profile.email.toLowerCase();
  const save = useSubmit(async () => {
    setMessage("");
    await mutate("user.update", {
      name,
      ...(newEmail ? { email, currentPassword } : {}),
    });
    setCurrentPassword("");
    setMessage(newEmail ? `Saved; ${email} is used once it is confirmed.` : "Saved.");
    onSaved();
  });
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-labelledby="profile-name-title">
      <h2 id="profile-name-title">Name and email</h2>
      <label>
        Your name
        <input required autocomplete="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Your email
        <input
          type="email"
          required
          autocomplete="email"
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
      </label>
      {newEmail && (
        <label>
          Current password (to change the email)
          <input
            type="password"
            required
            autocomplete="current-password"
            value={currentPassword}
            onInput={(e) => setCurrentPassword(e.currentTarget.value)}
          />
        </label>
      )}
      <button type="submit" disabled={save.busy}>
        Save profile
      </button>
      <span role="status">{message}</span>
      <ErrorText error={save.error} />
    </form>
  );
}

function ChangePassword() {
  const [currentPassword, setCurrentPassword] = useState("");
  const [password, setPassword] = useState("");
  const [repeated, setRepeated] = useState("");
  const [message, setMessage] = useState("");
  const save = useSubmit(async () => {
    setMessage("");
    if (password !== repeated) throw new Error("The new password and its repetition differ");
    await mutate("user.update", { currentPassword, password });
    setCurrentPassword("");
    setPassword("");
    setRepeated("");
    setMessage("Password changed: sign in with the new one from now on.");
  });
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <label>
        Current password
        <input
          type="password"
          required
          autocomplete="current-password"
          value={currentPassword}
          onInput={(e) => setCurrentPassword(e.currentTarget.value)}
        />
      </label>
      <label>
        New password
        <input
          type="password"
          required
          autocomplete="new-password"
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
      </label>
      <label>
        New password again
        <input
          type="password"
          required
          autocomplete="new-password"
          value={repeated}
          onInput={(e) => setRepeated(e.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={save.busy}>
        Change password
      </button>
      <span role="status">{message}</span>
      <ErrorText error={save.error} />
    </form>
  );
}

/** Recovery codes, shown once after they are made. */
function RecoveryCodes({ codes }: { codes: string[] }) {
  return (
    <section aria-labelledby="recovery-title">
      <h3 id="recovery-title">Recovery codes</h3>
      <p>
        Keep these somewhere safe: each signs you in once without the authenticator. They are shown only now.
      </p>
      <ul class="recovery-codes" aria-label="Recovery codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
    </section>
  );
}

function PasswordField({
  value,
  onInput,
  label,
}: {
  value: string;
  onInput: (v: string) => void;
  label: string;
}) {
  return (
    <label>
      {label}
      <input
        type="password"
        required
        autocomplete="current-password"
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
    </label>
  );
}

function TwoFactor({ enabled, onChanged }: { enabled: boolean; onChanged: () => void }) {
  const [password, setPassword] = useState("");
  const [enrolment, setEnrolment] = useState<Answer<"auth.twoFactorEnable">>();
  const [code, setCode] = useState("");
  const [codes, setCodes] = useState<string[]>();
  const [message, setMessage] = useState("");
  const start = useSubmit(async () => {
    setMessage("");
    setCodes(undefined);
    const answer = await mutate<Answer<"auth.twoFactorEnable">>("auth.twoFactorEnable", { password });
    setPassword("");
    setEnrolment(answer);
  });
  const confirm = useSubmit(async () => {
    if (!enrolment) return;
    await mutate("auth.twoFactorConfirm", { code: code.trim() });
    setCodes(enrolment.backupCodes);
    setEnrolment(undefined);
    setCode("");
    setMessage("Two-factor sign-in is on: sign-in asks for a code from now on.");
    onChanged();
  });
  const regenerate = useSubmit(async () => {
    setMessage("");
    const answer = await mutate<{ backupCodes: string[] }>("auth.twoFactorGenerateBackupCodes", { password });
    setPassword("");
    setCodes(answer.backupCodes);
    setMessage("New recovery codes: the old ones no longer work.");
  });
  const disable = async () => {
    setMessage("");
    if (!password) throw new Error("Type your password beside the button first: turning it off needs it");
    await mutate("auth.twoFactorDisable", { password });
    setPassword("");
    setCodes(undefined);
    setMessage("Two-factor sign-in is off.");
    onChanged();
  };
  return (
    <section class="card" aria-labelledby="two-factor-title">
      <h2 id="two-factor-title">Two-factor sign-in</h2>
      <p>
        {enabled
          ? "On: sign-in asks for a code from your authenticator."
          : "Off: sign-in asks for the password only."}
      </p>
      {!enabled && !enrolment && (
        <form onSubmit={start.onSubmit} class="inline" aria-label="Enable two-factor sign-in">
          <PasswordField
            label="Password (to enable two-factor sign-in)"
            value={password}
            onInput={setPassword}
          />
          <button type="submit" disabled={start.busy}>
            Enable two-factor sign-in
          </button>
          <ErrorText error={start.error} />
        </form>
      )}
      {enrolment && (
        <form onSubmit={confirm.onSubmit} class="inline" aria-label="Confirm two-factor sign-in">
          <p>
            Add this account to your authenticator app with the URI or the secret (type it in), then enter the
            code it shows.
          </p>
          <p>
            URI:{" "}
            <output class="secret" aria-label="Authenticator URI">
              {enrolment.totpURI}
            </output>
          </p>
          <p>
            Secret:{" "}
            <output class="secret" aria-label="Authenticator secret">
              {enrolment.secret}
            </output>
          </p>
          <label>
            Code from the authenticator
            <input
              required
              inputMode="numeric"
              autocomplete="one-time-code"
              pattern="[0-9 ]{6,7}"
              value={code}
              onInput={(e) => setCode(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={confirm.busy}>
            Confirm two-factor sign-in
          </button>
          <ErrorText error={confirm.error} />
        </form>
      )}
      {codes && <RecoveryCodes codes={codes} />}
      {enabled && (
        <form class="inline" aria-label="Two-factor sign-in settings" onSubmit={regenerate.onSubmit}>
          <PasswordField
            label="Password (for recovery codes or to turn it off)"
            value={password}
            onInput={setPassword}
          />
          <button type="submit" class="ghost" disabled={regenerate.busy}>
            New recovery codes
          </button>
          <ConfirmButton
            label="Turn two-factor sign-in off"
            title="Turn two-factor sign-in off?"
            consequence="Sign-in then asks for the password only; the authenticator's secret and the recovery codes are deleted, and turning it on again needs a new enrolment."
            confirmLabel="Turn it off"
            action={disable}
          />
          <ErrorText error={regenerate.error} />
        </form>
      )}
      <span role="status">{message}</span>
    </section>
  );
}

export function ProfilePage() {
  const profile = useLoad(() => query<Profile>("user.get"), "profile");
  return (
    <>
      <h1>Profile</h1>
      <ErrorText error={profile.error} />
      {profile.data && (
        <>
          <NameAndEmail profile={profile.data} onSaved={profile.reload} />
          <ChangePassword />
          <TwoFactor enabled={profile.data.twoFactorEnabled} onChanged={profile.reload} />
        </>
      )}
    </>
  );
}
