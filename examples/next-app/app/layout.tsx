import type { ReactNode } from 'react';
import './globals.css';

// No favicon file: an empty data URL keeps browsers from asking for /favicon.ico.
export const metadata = { title: 'ai-toolbelt · Next.js chat', icons: { icon: 'data:,' } };

/** The root layout. */
export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
