/**
 * POST /receiveHl7: a lab or EHR sends one HL7 v2 message (or an FHS/BHS batch of up to 100); the answer
 * is its HL7 acknowledgement.
 *
 *   scope     interop:ingest:hl7 (endpoint list, lib/config/service.ts)
 *   body      application/hl7-v2 (also x-application/hl7-v2+er7, text/plain), <= 6 MB; segments ended by
 *             CR (CRLF / LF accepted); UTF-8 unless MSH-18 says 8859/1
 *   domain    receiveHl7 (lib/intake/receive-hl7.ts): ORU^R01, ADT^A01/A04/A08/A28/A31/A40, MDM^T02
 *   answer    200 application/hl7-v2: ACK with MSA-1 AA / AE / AR (+ ERR), or a batch ACK;
 *             400 problem+json only when the body holds no MSH; 413 / 415; 503 + Retry-After when a
 *             dependency is unavailable (resend the same message: it is idempotent on MSH-4 + MSH-10)
 */
import { receiveHl7Route } from '../lib/config/service';
import { httpEndpoint, hl7Response } from '../lib/http/endpoint';
import { readHl7Body } from '../lib/http/hl7-body';
import { receiveHl7 } from '../lib/intake/receive-hl7';
import { ownNames, receiveHl7Dependencies } from '../lib/intake/receive-hl7-wiring';

export const handler = httpEndpoint(receiveHl7Route, async (request) => {
  const body = readHl7Body(request.event);
  const outcome = await receiveHl7(
    { body, principal: request.principal, requestId: request.requestId, now: request.now, ...ownNames() },
    receiveHl7Dependencies(),
  );
  const counts = { AA: 0, AE: 0, AR: 0 };
  for (const o of outcome.outcomes) counts[o.code] += 1;
  const single = outcome.outcomes.length === 1 ? outcome.outcomes[0]!.audit : undefined;
  request.audit({
    action: single?.action ?? (outcome.batch ? 'hl7.batch' : 'hl7.message'),
    patientId: single?.patientId,
    resourceIds: {
      ...(single?.resourceIds ?? {}),
      accepted: String(counts.AA),
      errors: String(counts.AE),
      rejected: String(counts.AR),
      replayed: String(outcome.outcomes.filter((o) => o.replayed).length),
    },
  });
  return hl7Response(outcome.ack);
});
