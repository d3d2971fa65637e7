// Choosing a setting by measurement without grading it on the data that chose it: for each dev
// set, the setting is picked on the other five and scored on the one left out.
import type { Figures } from './figures.ts';

/** A candidate setting's figures per set. */
export type Candidate = { label: string; bySet: ReadonlyMap<string, Figures> };

const r5 = (figures: Figures): number => figures.recall['R@5']!;

/** Differences of R@5 this small are below the figures' resolution (0.1 point): ties. */
const RESOLUTION = 0.1 + 1e-9;

/**
 * The candidate a choice on `sets` makes: the one whose worst R@5 gain over lexical on those sets
 * is highest (a catalog nobody tuned on must not pay for another's gain: the worst case is what
 * "never loses" asks for), among those within the figures' resolution of it the one with the
 * highest mean gain, and among equals the earlier one (the default is listed first). Choosing by
 * the mean gain among candidates that merely do not lose on the five picks a setting that
 * loses on the sixth: with seal-tools left out, the dense channel at 0.5 (bench:quality).
 */
export function choose(
  candidates: readonly Candidate[],
  lexical: ReadonlyMap<string, Figures>,
  sets: readonly string[],
): Candidate {
  const scored = candidates.map(candidate => {
    const gains = sets.map(set => r5(candidate.bySet.get(set)!) - r5(lexical.get(set)!));
    return {
      candidate,
      worst: Math.min(...gains),
      mean: gains.reduce((sum, gain) => sum + gain, 0) / gains.length,
    };
  });
  const bestWorst = Math.max(...scored.map(({ worst }) => worst));
  const near = scored.filter(({ worst }) => worst >= bestWorst - RESOLUTION);
  const bestMean = Math.max(...near.map(({ mean }) => mean));
  return near.find(({ mean }) => mean >= bestMean - 1e-9)!.candidate;
}

/** For each set: the candidate chosen on the others, its figures there, and the all-sets choice's. */
export function leaveOneOut(
  candidates: readonly Candidate[],
  lexical: ReadonlyMap<string, Figures>,
  sets: readonly string[],
): {
  inSample: Candidate;
  folds: { set: string; picked: string; leftOut: Figures; inSample: Figures }[];
} {
  const inSample = choose(candidates, lexical, sets);
  const folds = sets.map(set => {
    const picked = choose(
      candidates,
      lexical,
      sets.filter(other => other !== set),
    );
    return {
      set,
      picked: picked.label,
      leftOut: picked.bySet.get(set)!,
      inSample: inSample.bySet.get(set)!,
    };
  });
  return { inSample, folds };
}
