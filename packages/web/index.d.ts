/** The directory of the built web app (index.html and its assets). */
export declare const WEB_APP_BUNDLE: URL;
