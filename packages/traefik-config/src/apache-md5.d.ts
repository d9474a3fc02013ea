// apache-md5 ships no types: md5(password, salt?) returns an APR1 hash `$apr1$<salt>$<hash>`;
// `salt` may be a whole APR1 hash, whose salt is then reused (that is how a hash is verified).
declare module "apache-md5" {
  export default function md5(password: string, salt?: string): string;
}
