/**
 * English function words plus the politeness fillers of chat requests
 * ("please", "could you"). Content words stay: IDF down-weights frequent
 * ones per catalog, which is more honest than a hand-grown list.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being ' +
    'below between both but by can cannot could did do does doing down during each few for from ' +
    'further had has have having he her here hers herself him himself his how i if in into is it ' +
    'its itself just let me more most my myself no nor not now of off on once only or other our ours ' +
    'ourselves out over own same she should so some such than that the their theirs them themselves ' +
    'then there these they this those through to too under until up very was we were what when ' +
    'where which while who whom why will with would you your yours yourself yourselves also ' +
    'please pls kindly want wanna need like could would shall may might must im ive id youre dont ' +
    'e g eg ie etc via using use'
  ).split(' '),
);
