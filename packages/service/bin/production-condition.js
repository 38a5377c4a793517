/**
 * A module-resolution hook for the production form of Cinder (no tsx, the build in dist/): it
 * resolves Cinder's own packages through their "production" export condition (their dist/), where
 * a checkout resolves them to their TypeScript sources. Node has no other way to set a condition
 * than its --conditions flag, which a launcher cannot add to the process that runs it.
 */
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier, { ...context, conditions: [...context.conditions, 'production'] });
}
