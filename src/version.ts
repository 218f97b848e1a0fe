/** The gateway's version, reported by the settings endpoint and the start banner. */
export const VERSION = "0.1.0";
