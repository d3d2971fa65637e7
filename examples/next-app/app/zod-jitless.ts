// useChat checks each streamed chunk with zod, which probes for eval (`new Function('')`) as it
// builds each object schema, to compile faster checks: the page's Content-Security-Policy refuses
// eval and reports every probe. Without its compiler zod asks nothing. Imported first by chat.tsx,
// so it runs before the AI SDK's modules build their schemas.
import { z } from 'zod';

z.config({ jitless: true });
