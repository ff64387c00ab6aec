// The document Agenda stores for a job scheduled now (its saveJob fields), for benchmarks that write jobs themselves.

export function agendaJobDocument(name: string, n: number): Record<string, unknown> {
  return {
    name,
    data: { n },
    priority: 0,
    type: "normal",
    nextRunAt: new Date(),
    lockedAt: null,
    lastFinishedAt: null,
    failedAt: null,
    failCount: null,
    failReason: null,
    repeatTimezone: null,
    lastRunAt: null,
    repeatInterval: null,
    repeatAt: null,
    disabled: null,
    progress: null,
    debounceStartedAt: null,
    fork: null,
    startDate: null,
    endDate: null,
    skipDays: null,
    lastModifiedBy: null,
  };
}
