/* global URL */
/**
 * The web app's public entry: where its built files are. The bundle is committed (bundle/, remade
 * by `npm run build:web` from src/), so the service serves it with no build step of its own.
 */
export const WEB_APP_BUNDLE = new URL('./bundle/', import.meta.url);
