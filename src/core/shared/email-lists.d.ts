/** mixmax's role local parts: the package ships no types; its export is an array of strings. */
declare module 'role-based-email-addresses' {
  const roleLocalParts: string[];
  export = roleLocalParts;
}
