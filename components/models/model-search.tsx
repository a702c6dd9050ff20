import { SearchIcon } from '@/components/ui/icons';
import { Input } from '@/components/ui/input';
import { Spinner } from '@/components/ui/spinner';

interface ModelSearchProps {
  value: string;
  onChange: (value: string) => void;
  busy: boolean;
}

export function ModelSearch({ value, onChange, busy }: ModelSearchProps) {
  return (
    <div role="search" className="relative w-full sm:max-w-xs">
      <label htmlFor="model-search" className="sr-only">
        Search models by name
      </label>
      <SearchIcon className="pointer-events-none absolute top-1/2 left-3 size-4 -translate-y-1/2 text-fg-subtle" />
      <Input
        id="model-search"
        type="search"
        placeholder="Search models…"
        value={value}
        maxLength={200}
        autoComplete="off"
        spellCheck={false}
        onChange={(event) => onChange(event.target.value)}
        className="pl-9"
        data-testid="model-search"
      />
      {busy ? <Spinner className="absolute top-1/2 right-3 size-3.5 -translate-y-1/2 text-fg-subtle" /> : null}
    </div>
  );
}
