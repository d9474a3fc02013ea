/** Request limits shared by the HTTP layer and the dispatcher. */
export const MAX_BODY_BYTES = 1024 * 1024;
