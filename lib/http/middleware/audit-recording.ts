import type { APIGatewayProxyResult } from 'aws-lambda';
import { AuditTrail, outcomeForStatus } from '../../audit/audit-trail';
import { dynamoDbClient } from '../../aws/clients';
import { ContainerCache } from '../../aws/container-cache';
import { tableName } from '../../dynamo/table-names';
import { logger } from '../../observability/logger';
import { statusForError } from '../domain-problems';
import { DependencyUnavailableError } from '../../domain-errors';
import { disclosuresOf, reportPatientReadVolume } from '../../disclosures/disclosure-recorder';
import { disclosureLog, patientReadVolume, patientReadsAlarmThreshold } from '../../disclosures/disclosure-wiring';

/** Same margin as the handler's early timeout (lib/http/endpoint.ts). */
const AUDIT_TIMEOUT_MARGIN_MS = 1000;
import { requestState, type MiddyRequest } from '../request-state';

const trails = new ContainerCache<AuditTrail>();
/** Kept per container; rebuilt when the SDK client was replaced (local stack restart in one process). */
function auditTrail(): AuditTrail {
  return trails.get([dynamoDbClient(), tableName('audit')], ([client, table]) => new AuditTrail(client, table));
}

/** The partner's distinct patients of the hour, and the warning line above the threshold; a failure is logged, not answered. */
async function countPatientReads(partnerId: string, patientIds: string[], now: Date, requestId: string): Promise<void> {
  try {
    reportPatientReadVolume(partnerId, await patientReadVolume().count(partnerId, patientIds, now), patientReadsAlarmThreshold(), requestId);
  } catch (error) {
    logger.warn('disclosure.read_volume_failed', { requestId, partnerId, errorName: (error as Error).name });
  }
}

/**
 * Appends the audit record of every request whose endpoint declared what PHI it touched.
 * Success: the record is written before the response leaves; if it cannot be written the caller
 * gets a 503 instead of the data (no unaudited PHI access). Failure outcomes: best effort.
 * A successful export or FHIR read also appends one disclosure per patient it concerned (the
 * accounting of disclosures, lib/disclosures: required like the audit record) and counts the
 * partner's distinct patients of the hour (best effort: a failed count is a warning, never a 503).
 */
export function auditRecording() {
  const recorded = new WeakSet<object>();
  const write = async (request: MiddyRequest, status: number) => {
    const state = requestState(request);
    if (!state?.auditEvent || !state.principal || recorded.has(state)) return;
    recorded.add(state);
    // ids a caller sent that did not resolve to a record are unverified text (a caller may put an
    // MRN or a name there): only a successful request's ids are kept
    const { relatedPatientIds, ...main } = state.auditEvent;
    const event = status < 300 ? main : { action: main.action };
    const common = {
      at: state.now.toISOString(),
      requestId: state.requestId,
      partnerId: state.principal.partnerId,
      keyId: state.principal.keyId,
      ...(state.principal.staff ? { staffSubject: state.principal.staff.subject, staffUsername: state.principal.staff.username } : {}),
      outcome: outcomeForStatus(status),
      status,
    };
    const writes: Array<Promise<unknown>> = [];
    if (status < 300) {
      const related = [...new Set(relatedPatientIds ?? [])].filter((id) => id !== main.patientId);
      writes.push(...related.map((patientId) => auditTrail().append({ action: main.action, patientId, resourceIds: main.resourceIds, ...common })));
      const disclosures = disclosuresOf({ ...state, principal: state.principal, auditEvent: state.auditEvent });
      writes.push(...disclosures.map((record) => disclosureLog().append(record)));
      if (disclosures.length > 0)
        writes.push(
          countPatientReads(
            state.principal.partnerId,
            disclosures.map((d) => d.patientId),
            state.now,
            state.requestId,
          ),
        );
    }
    await Promise.all(writes);
    await auditTrail().append({ ...event, ...common });
  };
  return {
    after: async (request: MiddyRequest) => {
      // the handler's early timeout does not cover this step: bound it by the same deadline
      const remaining = request.context.getRemainingTimeInMillis?.() ?? Number.POSITIVE_INFINITY;
      const budget = remaining - AUDIT_TIMEOUT_MARGIN_MS;
      let timer: NodeJS.Timeout | undefined;
      const deadline = Number.isFinite(budget)
        ? new Promise<never>((_resolve, reject) => {
            timer = setTimeout(() => reject(new DependencyUnavailableError('audit-timeout')), Math.max(0, budget));
          })
        : undefined;
      try {
        const append = write(request, (request.response as APIGatewayProxyResult).statusCode);
        await (deadline ? Promise.race([append, deadline]) : append);
      } finally {
        if (timer) clearTimeout(timer);
      }
    },
    onError: async (request: MiddyRequest) => {
      try {
        await write(request, statusForError(request.error));
      } catch (error) {
        logger.warn('audit.append_failed', { requestId: requestState(request)?.requestId, errorName: (error as Error).name });
      }
    },
  };
}
