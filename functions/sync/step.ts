import { systemClock } from '../../lib/clock';
import { asyncHandler } from '../../lib/lambda/async-handler';
import { isId } from '../../lib/ident';
import { isSection } from '../../lib/sync/model';
import { DEFAULT_SECTION_SETTINGS } from '../../lib/sync/sections';
import { runStep, StepInput } from '../../lib/sync/step';
import { log, syncDeps } from './deps';

/** Async invocation by the tick: one section of one attempt. */
export const handler = asyncHandler(log, async (event: unknown) => {
  if (!isStepInput(event)) {
    log.error('sync_step_bad_input', { event: JSON.stringify(event).slice(0, 500) });
    return 'rejected';
  }
  const { hourly, connections, data, settings, dispatch } = syncDeps();
  return runStep(
    {
      hourly,
      dispatch,
      connections,
      data,
      tbank: {
        baseUrl: settings.tbankUrl,
        appName: settings.tbankAppName,
        rateWindowMs: settings.tbankRateWindowMs,
        egressAddresses: settings.tbankEgressAddresses,
      },
      timeoutMs: settings.stepTimeoutMs,
      settings: { ...DEFAULT_SECTION_SETTINGS, historyDays: settings.historyDays },
      now: systemClock,
      log,
    },
    event,
  );
});

function isStepInput(value: unknown): value is StepInput {
  const v = value as Partial<StepInput> | null;
  return !!v && isId(v.user_id) && isId(v.attempt_id) && isId(v.step_id) && isSection(v.section);
}
