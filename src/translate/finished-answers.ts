/**
 * Tells, from the index of each answer's finish as a stream gives it, whether all `answers`
 * answers a request asked for (OpenAI's n, Gemini's candidateCount) have finished: with several,
 * the first to finish does not end the response. Each index counts once, since an upstream may
 * repeat a finish. For one answer any finish will do, as it always did, with nothing allocated.
 */
export function finishedAnswers(answers: number): (index: number) => boolean {
  if (answers <= 1) return anyFinish;
  const finished = new Set<number>();
  return (index) => finished.add(index).size >= answers;
}

const anyFinish = () => true;
