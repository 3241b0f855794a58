/**
 * Key design of the sync table (one place).
 *
 * item          PK                 SK                         access pattern
 * connection    CONN               USER#<user>                the tick pages all connections
 * hourly head   USER#<user>        HOURLY                     the fence: reserve / CAS every write of the attempt
 * attempt       ATTEMPT#<attempt>  META                       GET /sync/attempts/{id}
 * step row      ATTEMPT#<attempt>  STEP#<section>             rows of an attempt: Query PK, begins_with STEP#
 * operation     USER#<user>        OP#<date>#<operation id>   GET /sync/{user}/operations?from=&to= (range on SK)
 * position      USER#<user>        POS#<account>#<instrument>
 * event         USER#<user>        EVT#<event id>
 * instrument    INSTR#<id>         META
 */
export const connectionKey = (user: string) => ({ PK: 'CONN', SK: `USER#${user}` });
export const headKey = (user: string) => ({ PK: `USER#${user}`, SK: 'HOURLY' });
export const attemptKey = (attempt: string) => ({ PK: `ATTEMPT#${attempt}`, SK: 'META' });
export const stepKey = (attempt: string, section: string) => ({ PK: `ATTEMPT#${attempt}`, SK: `STEP#${section}` });
export const operationKey = (user: string, date: string, id: string) => ({ PK: `USER#${user}`, SK: `OP#${date}#${id}` });
export const positionKey = (user: string, account: string, instrument: string) => ({ PK: `USER#${user}`, SK: `POS#${account}#${instrument}` });
export const eventKey = (user: string, id: string) => ({ PK: `USER#${user}`, SK: `EVT#${id}` });
export const instrumentKey = (id: string) => ({ PK: `INSTR#${id}`, SK: 'META' });
export const userPartition = (user: string) => `USER#${user}`;
export const attemptPartition = (attempt: string) => `ATTEMPT#${attempt}`;
