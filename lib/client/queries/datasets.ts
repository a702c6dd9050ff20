/** Datasets (artifacts): no page lists them yet; an SFT launch uploads one and marks whatever is cached stale. */
export const datasetKeys = {
  all: () => ['datasets'] as const,
};
