/**
 * Sandbox keys and plans (contract rows 10, 11, 24). The plan is the key's middle word. Keys are never
 * written into a response or a log line: the reasons below say what was wrong, not what was sent.
 */
import { ApiError } from './errors.js';

export const PLANS = ['free', 'starter', 'growth', 'scale'] as const;
export type Plan = (typeof PLANS)[number];

export const SANDBOX_KEYS: Readonly<Record<Plan, string>> = {
  free: 'sandbox-free',
  starter: 'sandbox-starter',
  growth: 'sandbox-growth',
  scale: 'sandbox-scale',
};

const PLAN_BY_KEY = new Map<string, Plan>(PLANS.map((plan) => [SANDBOX_KEYS[plan], plan]));

/** Plans that may call /contacts (spec §4.2: Growth upward). */
export const CONTACT_PLANS: ReadonlySet<Plan> = new Set<Plan>(['growth', 'scale']);

function unauthorized(reason: string): ApiError {
  return new ApiError(401, 'unauthorized', reason, {}, { 'www-authenticate': 'Bearer realm="prospect-sandbox"' });
}

/** The plan of the request's key, or 401. The scheme is matched case-insensitively (RFC 9110). */
export function authenticate(header: string | undefined): Plan {
  if (header === undefined || header.trim() === '') {
    throw unauthorized("Missing Authorization header: send 'Authorization: Bearer <API key>'.");
  }
  const match = /^(\S+)\s+(\S+)\s*$/.exec(header.trim());
  if (!match || (match[1] as string).toLowerCase() !== 'bearer') {
    throw unauthorized("The Authorization header must use the Bearer scheme: 'Authorization: Bearer <API key>'.");
  }
  const plan = PLAN_BY_KEY.get(match[2] as string);
  if (!plan) throw unauthorized('The API key is not valid.');
  return plan;
}
